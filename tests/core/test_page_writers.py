"""What a page's records are written with, made once for the page: the attributes writer compiled for a
list of fields (`serializer.compiled_writer`) and the authorization flags of records `show` let through
(`Gate.shown_flags`). Each answers exactly as the record-by-record path it stands in for."""
import logging
from datetime import datetime, timedelta, timezone

import pytest
from bson import Int64

from repositories.policies import OwnedPolicy
from service import Model, field
from service.core.declarations.policies import Gate
from service.core.reading.serializer import Attributes, compiled_writer
from storage.writes import VERSION

FIELDS = [field("title"), field("published").boolean(), field("views").numeric(), field("seen_at").date(),
          field("tags"), field("version"), field("extra").nullable()]
DOCUMENTS = [
    {"id": "a", "title": "One", "published": True, "views": 3, "seen_at": "2026-01-02T03:04:05.000Z",
     "created_at": "2026-01-01T00:00:00.000Z", "updated_at": None, VERSION: 4},
    {"id": "b", "published": 1, "views": 2.5, "seen_at": datetime(2026, 5, 6, 7, 8, 9, 123456),
     "created_at": datetime(2026, 1, 1, tzinfo=timezone.utc),
     "updated_at": datetime(2026, 1, 1, 2, tzinfo=timezone(timedelta(hours=2)))},
    {"id": "c", "title": None, "published": 0, "views": Int64(2**40), "tags": ["x", {"y": 1}], "version": "mine",
     "extra": {"nested": datetime(2026, 1, 1)}},
    {"id": "d", "published": "", "views": True, "title": 7, "seen_at": datetime(2026, 1, 1, tzinfo=timezone.utc)},
    {"id": "e"},
]


@pytest.mark.parametrize("keep", [None, frozenset({"title", "created_at"}), frozenset()])
@pytest.mark.parametrize("document", DOCUMENTS, ids=[d["id"] for d in DOCUMENTS])
def test_a_compiled_writer_writes_what_the_loop_writes(document, keep):
    fields = [f for f in FIELDS if keep is None or f.name in keep]
    writer = Attributes(fields, keep)
    assert writer.write.__name__ == "write"  # compiled: no field is shown by policy
    assert writer.write(document) == writer._write_each(document)
    assert list(writer.write(document)) == list(writer._write_each(document))
    assert writer.flat(document) == writer._flat_each(document)
    assert list(writer.flat(document)) == list(writer._flat_each(document))
    into = {"first": 1}
    assert writer.write(document, into) is into and list(into)[0] == "first"


def test_an_attribute_named_version_wins_in_a_flat_record():
    writer = Attributes([field("version")])
    stamps = {"created_at": None, "updated_at": None}
    assert writer.flat({"id": "c", "version": "mine", VERSION: 4}) == {"id": "c", "version": "mine", **stamps}
    assert writer.flat({"id": "d", VERSION: 4}) == {"id": "d", "version": None, **stamps}
    assert Attributes([field("title")]).flat({"id": "e", VERSION: 4}) == {"id": "e", "version": 4, "title": None,
                                                                          **stamps}


def test_a_field_shown_by_policy_keeps_the_loop():
    shown = field("title")
    shown.shown_for = lambda document: document.get("title") != "secret"
    writer = Attributes([shown, field("views")])
    assert writer.write == writer._write_each
    assert writer.write({"title": "secret", "views": 1}) == {"views": 1, "created_at": None, "updated_at": None}


def test_each_list_of_fields_is_compiled_once():
    compiled_writer.cache_clear()
    for _ in range(3):
        Attributes([field("title"), field("published").boolean()])
    Attributes([field("title"), field("published")])  # another kind: another writer
    assert (compiled_writer.cache_info().hits, compiled_writer.cache_info().misses) == (2, 2)


class _Owned(OwnedPolicy):
    def delete(self, user, record):
        if record.title == "broken":
            raise RuntimeError("policy bug")
        return super().delete(user, record)


class _Closed(_Owned):
    def allow_restify(self, user):
        return False


RECORDS = [Model({"id": "1", "user_id": "u"}), Model({"id": "2", "user_id": "v"}),
           Model({"id": "3", "user_id": "u", "title": "broken"})]


@pytest.mark.parametrize("policy", [_Owned(), _Closed()], ids=["owned", "closed"])
@pytest.mark.parametrize("user", [None, Model({"id": "u"})], ids=["guest", "owner"])
def test_page_flags_are_the_flags_of_each_record(policy, user, caplog):
    gate = Gate(policy, user)
    flags = gate.shown_flags()
    with caplog.at_level(logging.ERROR):
        for record in RECORDS:
            # What the policy answers for this record, method by method (a raising one: refused).
            asked = {}
            for action in ("store", "update", "delete"):
                try:
                    asked[action] = bool(getattr(policy, action)(*((user,) if action == "store" else (user, record))))
                except RuntimeError:
                    asked[action] = False
            expected = {"authorizedToShow": gate.entered, "authorizedToStore": gate.entered and asked["store"],
                        "authorizedToUpdate": gate.entered and asked["update"],
                        "authorizedToDelete": gate.entered and asked["delete"]}
            assert flags(record) == expected
            assert list(flags(record)) == list(expected)
            assert gate.flags(record, shown=True) == {**expected, "authorizedToShow": True}  # as the caller says
            assert gate.flags(record) == expected  # show asked: every record here is shown
    if gate.entered:  # a policy that raises fails closed, and says so
        assert flags(RECORDS[2])["authorizedToDelete"] is False
        assert "policy _Owned.delete raised; denying" in caplog.text


class _Picky(_Owned):
    def show(self, user, record):
        if record.title == "broken":
            raise RuntimeError("policy bug")
        return record.title != "withheld"


def test_a_page_asks_show_as_each_record_would(caplog):
    records = [Model({"id": "1", "title": "fine"}), Model({"id": "2", "title": "withheld"}),
               Model({"id": "3", "title": "broken"})]
    with caplog.at_level(logging.WARNING):
        assert [Gate(_Picky(), None).shown_test()(record) for record in records] == [True, False, False]
        assert [Gate(_Picky(), None).shows(record) for record in records] == [True, False, False]
        assert [Gate(_Closed(), None).shown_test()(record) for record in records] == [False, False, False]
    assert "policy _Picky.show raised; denying" in caplog.text
