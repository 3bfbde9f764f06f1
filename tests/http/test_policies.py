"""Who may do what, through the demo policies and through policies built for the test."""
import logging

import pytest

import storage
from service import Model, Policy, Repository, field
from service.core.declarations.registry import build_registry, load_app
from tests.conftest import ROOT

PREFIX = "/api/restify"
UNAUTHENTICATED = {"message": "Unauthenticated."}
FORBIDDEN = {"message": "This action is unauthorized."}
NOT_FOUND = {"message": "Not found."}


# -- helpers ------------------------------------------------------------------------------
@pytest.fixture
def content(api, ann, io_loop):
    """A post by Ann with a comment by Ann, and a tag."""
    async def make():
        post = (await api.post(f"{PREFIX}/posts", {"title": "Ann's", "body": "Text"}, token=ann["token"])).json
        comment = (await api.post(f"{PREFIX}/comments", {"body": "Mine", "post_id": post["data"]["id"]},
                                  token=ann["token"])).json
        tag = (await api.post(f"{PREFIX}/tags", {"name": "python"}, token=ann["token"])).json
        return {"posts": post["data"]["id"], "comments": comment["data"]["id"], "tags": tag["data"]["id"]}
    return io_loop.run_sync(make)


def flags(show: bool, store: bool, update: bool, delete: bool, version: int = 1) -> dict:
    """A record's `meta`: its authorization flags and its version (1 once created)."""
    return {"authorizedToShow": show, "authorizedToStore": store,
            "authorizedToUpdate": update, "authorizedToDelete": delete, "version": version}


async def snapshot(db, name: str) -> list[dict]:
    return await db.collection(name).find(storage.Filter(), sort=[("id", 1)])


WRITES = [("PUT", {"title": "Taken", "body": "Taken"}), ("PATCH", {"title": "Taken", "body": "Taken"}),
          ("POST", {"title": "Taken", "body": "Taken"}), ("DELETE", None)]


# -- guests ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["posts", "comments", "tags"])
async def test_guests_read_posts_comments_and_tags(api, content, name):
    listed = await api.get(f"{PREFIX}/{name}")
    assert listed.status == 200
    assert [row["id"] for row in listed.json["data"]] == [content[name]]
    assert listed.json["data"][0]["meta"] == flags(True, False, False, False)
    shown = await api.get(f"{PREFIX}/{name}/{content[name]}")
    assert shown.status == 200
    assert shown.json["data"]["meta"] == flags(True, False, False, False)


@pytest.mark.parametrize("name, body", [
    ("posts", {"title": "Guest"}),
    ("comments", {"body": "Guest", "post_id": None}),
    ("tags", {"name": "guest"}),
])
async def test_guests_storing_get_401_and_nothing_is_written(api, db, content, name, body):
    if "post_id" in body:
        body["post_id"] = content["posts"]
    before = await snapshot(db, name)
    response = await api.post(f"{PREFIX}/{name}", body)
    assert (response.status, response.json) == (401, UNAUTHENTICATED)
    assert await snapshot(db, name) == before


@pytest.mark.parametrize("name", ["posts", "comments", "tags"])
@pytest.mark.parametrize("method, body", WRITES)
async def test_guests_changing_records_get_401_and_nothing_changes(api, db, content, name, method, body):
    before = await snapshot(db, name)
    response = await api.request(method, f"{PREFIX}/{name}/{content[name]}", body)
    assert (response.status, response.json) == (401, UNAUTHENTICATED)
    assert await snapshot(db, name) == before


# -- owners and other users ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["posts", "comments"])
@pytest.mark.parametrize("method, body", WRITES)
async def test_a_user_who_is_not_the_owner_gets_403_and_nothing_changes(api, db, content, bob, name, method, body):
    before = await snapshot(db, name)
    response = await api.request(method, f"{PREFIX}/{name}/{content[name]}", body, token=bob["token"])
    assert (response.status, response.json) == (403, FORBIDDEN)
    assert await snapshot(db, name) == before


@pytest.mark.parametrize("name", ["posts", "comments"])
async def test_other_users_see_the_record_without_update_or_delete_rights(api, content, bob, name):
    response = await api.get(f"{PREFIX}/{name}/{content[name]}", token=bob["token"])
    assert response.json["data"]["meta"] == flags(True, True, False, False)


@pytest.mark.parametrize("name", ["posts", "comments"])
async def test_the_owner_may_update_and_delete(api, db, content, ann, name):
    updated = await api.patch(f"{PREFIX}/{name}/{content[name]}", {"body": "Edited"}, token=ann["token"])
    assert updated.status == 200
    assert (await db.collection(name).find_by_id(content[name]))["body"] == "Edited"
    deleted = await api.delete(f"{PREFIX}/{name}/{content[name]}", token=ann["token"])
    assert deleted.status == 204
    if name == "comments":  # the demo's comments go to the trash
        assert (await db.collection(name).find_by_id(content[name]))["deleted_at"] is not None
    else:
        assert await db.collection(name).find_by_id(content[name]) is None


async def test_any_user_may_change_a_tag(api, db, content, bob):
    response = await api.patch(f"{PREFIX}/tags/{content['tags']}", {"name": "rust"}, token=bob["token"])
    assert response.status == 200
    assert (await db.collection("tags").find_by_id(content["tags"]))["name"] == "rust"


# -- users ---------------------------------------------------------------------------------------
async def test_a_user_may_update_themselves(api, db, ann):
    response = await api.patch(f"{PREFIX}/users/{ann['id']}", {"bio": "About me"}, token=ann["token"])
    assert response.status == 200
    assert response.json["data"]["meta"] == flags(True, False, True, True, version=2)
    assert (await db.collection("users").find_by_id(ann["id"]))["bio"] == "About me"


@pytest.mark.parametrize("method, body", [("PUT", {"name": "Taken", "email": "taken@example.com"}),
                                          ("PATCH", {"bio": "Taken"}), ("POST", {"name": "Taken"}),
                                          ("DELETE", None)])
async def test_a_user_may_not_change_another_user(api, db, ann, bob, method, body):
    before = await snapshot(db, "users")
    response = await api.request(method, f"{PREFIX}/users/{bob['id']}", body, token=ann["token"])
    assert (response.status, response.json) == (403, FORBIDDEN)
    assert await snapshot(db, "users") == before


async def test_guests_may_not_show_a_user_nor_learn_that_it_exists(api, ann):
    response = await api.get(f"{PREFIX}/users/{ann['id']}")
    assert (response.status, response.json) == (404, NOT_FOUND)


async def test_guests_listing_users_see_no_rows(api, ann, bob):
    response = await api.get(f"{PREFIX}/users")
    assert response.status == 200
    assert response.json["data"] == []
    assert response.json["meta"]["total"] == 0  # the policy's scope hides the count too


@pytest.fixture
def own_comments_only(registry):
    """Comments listed only to their owner, through the policy's scope (in the query)."""
    policy = registry.policies.for_model(registry.get("comments").model)
    policy.scope = lambda user: {"user_id": user.id} if user is not None else False
    yield
    del policy.scope


async def test_a_policy_scope_filters_the_index_in_the_query(api, db, ann, bob, own_comments_only):
    post = (await api.post(f"{PREFIX}/posts", {"title": "t"}, token=ann["token"])).json["data"]["id"]
    for who, body in ((ann, "a1"), (bob, "b1"), (ann, "a2")):
        await api.post(f"{PREFIX}/comments", {"body": body, "post_id": post}, token=who["token"])
    listed = (await api.get(f"{PREFIX}/comments", token=ann["token"])).json
    assert [c["attributes"]["body"] for c in listed["data"]] == ["a1", "a2"]
    assert listed["meta"]["total"] == 2
    contradicting = (await api.get(f"{PREFIX}/comments?user_id={bob['id']}", token=ann["token"])).json
    assert (contradicting["data"], contradicting["meta"]["total"]) == ([], 0)
    guest = (await api.get(f"{PREFIX}/comments")).json
    assert (guest["data"], guest["meta"]["total"]) == ([], 0)


async def test_users_list_and_show_other_users_with_their_rights(api, ann, bob):
    listed = await api.get(f"{PREFIX}/users", token=ann["token"])
    assert listed.status == 200
    rows = {row["id"]: row["meta"] for row in listed.json["data"]}
    assert rows == {ann["id"]: flags(True, False, True, True), bob["id"]: flags(True, False, False, False)}
    shown = await api.get(f"{PREFIX}/users/{bob['id']}", token=ann["token"])
    assert shown.status == 200
    assert "email" not in shown.json["data"]["attributes"]  # a user's email is theirs alone
    assert "password" not in shown.json["data"]["attributes"]
    own = await api.get(f"{PREFIX}/users/{bob['id']}", token=bob["token"])
    assert own.json["data"]["attributes"]["email"] == bob["email"]


@pytest.mark.parametrize("who, expected", [("guest", (401, UNAUTHENTICATED)), ("user", (403, FORBIDDEN))])
async def test_users_cannot_be_stored_through_rest(api, db, ann, who, expected):
    body = {"name": "Eve", "email": "eve@example.com", "password": "secret-pass",
            "password_confirmation": "secret-pass"}
    response = await api.post(f"{PREFIX}/users", body, token=ann["token"] if who == "user" else None)
    assert (response.status, response.json) == expected
    assert await db.collection("users").count(storage.Filter()) == 1


# -- policies built for the test ----------------------------------------------------------------------
class Secret(Model):
    """A model nobody registered a policy for."""


class Closed(Model):
    """A model whose policy allows every action but refuses the repository as a whole."""


class Broken(Model):
    """A model whose policy raises."""


class SecretRepository(Repository):
    model = Secret

    def fields(self, request):
        return [field("title")]


class ClosedRepository(Repository):
    model = Closed

    def fields(self, request):
        return [field("title")]


class BrokenRepository(Repository):
    model = Broken

    def fields(self, request):
        return [field("title")]


class ClosedPolicy(Policy):
    def allow_restify(self, user):
        return False

    def show(self, user, record):
        return True

    def store(self, user):
        return True

    def update(self, user, record):
        return True

    def delete(self, user, record):
        return True


class BrokenPolicy(ClosedPolicy):
    def allow_restify(self, user):
        return True

    def show(self, user, record):
        raise RuntimeError("policy bug")

    def store(self, user):
        raise RuntimeError("policy bug")

    def update(self, user, record):
        raise RuntimeError("policy bug")

    def delete(self, user, record):
        raise RuntimeError("policy bug")


def _fail_closed_registry():
    base = load_app(ROOT)
    from repositories.policies import POLICIES  # the copy load_app has just imported
    repositories = [type(resource.repository) for resource in base.resources.values()]
    return build_registry(repositories + [SecretRepository, ClosedRepository, BrokenRepository],
                          {**POLICIES, Closed: ClosedPolicy, Broken: BrokenPolicy})


class TestPoliciesFailClosed:
    @pytest.fixture
    def registry(self):
        return _fail_closed_registry()

    @pytest.fixture
    def records(self, db, io_loop):
        async def make():
            return {name: (await db.collection(name).insert({"title": "Hidden"}))["id"]
                    for name in ("secrets", "closeds", "brokens")}
        return io_loop.run_sync(make)

    @pytest.mark.parametrize("name", ["secrets", "closeds", "brokens"])
    @pytest.mark.parametrize("method, path, body", [
        ("GET", "/{name}/{id}", None), ("POST", "/{name}", {"title": "x"}), ("PUT", "/{name}/{id}", {"title": "x"}),
        ("PATCH", "/{name}/{id}", {"title": "x"}), ("DELETE", "/{name}/{id}", None),
    ])
    async def test_users_are_refused_every_action(self, api, db, ann, records, name, method, path, body):
        before = await snapshot(db, name)
        response = await api.request(method, PREFIX + path.format(name=name, id=records[name]), body,
                                     token=ann["token"])
        # A record whose `show` raises is one the user may not see: as missing as any other.
        hidden = name == "brokens" and "{id}" in path
        assert (response.status, response.json) == ((404, NOT_FOUND) if hidden else (403, FORBIDDEN))
        assert await snapshot(db, name) == before

    @pytest.mark.parametrize("name, expected", [("secrets", (401, UNAUTHENTICATED)), ("closeds", (401, UNAUTHENTICATED)),
                                                ("brokens", (404, NOT_FOUND))])
    async def test_guests_are_asked_to_log_in_where_the_repository_refuses_them(self, api, records, name, expected):
        response = await api.get(f"{PREFIX}/{name}/{records[name]}")
        assert (response.status, response.json) == expected

    @pytest.mark.parametrize("name, status", [("secrets", 403), ("closeds", 403), ("brokens", 200)])
    async def test_index_refuses_the_repository_or_hides_the_rows(self, api, ann, records, name, status):
        response = await api.get(f"{PREFIX}/{name}", token=ann["token"])
        assert response.status == status
        if status == 200:
            assert response.json["data"] == []  # show raised for every row: none is shown
        else:
            assert response.json == FORBIDDEN

    def test_a_model_without_a_policy_is_logged_by_name_at_start_with_the_fix(self, caplog):
        with caplog.at_level(logging.WARNING, logger="restify.policies"):
            _fail_closed_registry()  # no request: the warning comes when the registry is built
        assert [r.getMessage() for r in caplog.records if r.name == "restify.policies"] == [
            "no policy registered for model Secret: every operation on it is denied; add a policy class for it in "
            "repositories/policies.py and list it in POLICIES ({Secret: SecretPolicy})"]

    async def test_the_demo_models_keep_their_policies(self, api, ann):
        response = await api.post(f"{PREFIX}/posts", {"title": "Still allowed"}, token=ann["token"])
        assert response.status == 201


# -- what a user may not see cannot be learned ----------------------------------------------------
from service.core.declarations import policies as policies_module  # noqa: E402
from tests.policy_rules import published_or_own_scope, published_or_own_show, rules  # noqa: E402,F401

MISSING_ID = "0" * 24
HIDE_BY = {
    "scope": {"scope": published_or_own_scope},
    "show": {"show": published_or_own_show},
    "both": {"scope": published_or_own_scope, "show": published_or_own_show},
}


@pytest.fixture
def drafts(api, ann, io_loop):
    """Ann's published post and Ann's draft."""
    async def make():
        made = {}
        for key, title, published in (("published", "Secret menu", True), ("draft", "Secret plan", False)):
            response = await api.post(f"{PREFIX}/posts", {"title": title, "published": published}, token=ann["token"])
            made[key] = response.json["data"]["id"]
        return made
    return io_loop.run_sync(make)


@pytest.fixture
def fresh_warnings(monkeypatch):
    """The once-per-process warnings, as if this test were the process's first."""
    monkeypatch.setattr(policies_module, "_warned_show", set(), raising=False)


@pytest.mark.parametrize("hide_by", ["scope", "show", "both"])
@pytest.mark.parametrize("who", ["guest", "bob"])
@pytest.mark.parametrize("method, body", [("GET", None)] + WRITES)
async def test_a_record_the_user_may_not_see_answers_404_like_one_that_never_existed(
        api, db, rules, drafts, bob, hide_by, who, method, body):
    rules("posts", **HIDE_BY[hide_by])
    token = bob["token"] if who == "bob" else None
    before = await snapshot(db, "posts")
    hidden = await api.request(method, f"{PREFIX}/posts/{drafts['draft']}", body, token=token)
    missing = await api.request(method, f"{PREFIX}/posts/{MISSING_ID}", body, token=token)
    assert (hidden.status, hidden.json) == (missing.status, missing.json) == (404, NOT_FOUND)
    assert await snapshot(db, "posts") == before


@pytest.mark.parametrize("hide_by", ["scope", "show", "both"])
@pytest.mark.parametrize("who, expected", [("guest", (401, UNAUTHENTICATED)), ("bob", (403, FORBIDDEN))])
@pytest.mark.parametrize("method, body", WRITES)
async def test_a_record_the_user_may_see_but_not_change_still_answers_401_or_403(
        api, db, rules, drafts, bob, hide_by, who, expected, method, body):
    rules("posts", **HIDE_BY[hide_by])
    before = await snapshot(db, "posts")
    response = await api.request(method, f"{PREFIX}/posts/{drafts['published']}", body,
                                 token=bob["token"] if who == "bob" else None)
    assert (response.status, response.json) == expected
    assert await snapshot(db, "posts") == before


@pytest.mark.parametrize("hide_by", ["scope", "show", "both"])
async def test_the_owner_still_reads_and_changes_a_draft(api, db, rules, drafts, ann, hide_by):
    rules("posts", **HIDE_BY[hide_by])
    shown = await api.get(f"{PREFIX}/posts/{drafts['draft']}", token=ann["token"])
    assert (shown.status, shown.json["data"]["meta"]) == (200, flags(True, True, True, True))
    updated = await api.patch(f"{PREFIX}/posts/{drafts['draft']}", {"body": "Edited"}, token=ann["token"])
    assert updated.status == 200
    assert (await db.collection("posts").find_by_id(drafts["draft"]))["body"] == "Edited"


async def search(api, text: str, token: str | None) -> tuple[list[str], int]:
    body = (await api.get(f"{PREFIX}/posts?search={text.replace(' ', '+')}", token=token)).json
    return [row["attributes"]["title"] for row in body["data"]], body["meta"]["total"]


async def test_a_show_only_rule_lets_the_search_total_count_hidden_titles_and_says_so_once(
        api, rules, drafts, bob, caplog, fresh_warnings):
    rules("posts", show=published_or_own_show)
    with caplog.at_level(logging.WARNING, logger="restify.policies"):
        # What the warning is about: the total counts the draft that the page does not show.
        assert await search(api, "Secret p", bob["token"]) == ([], 1)
        assert await search(api, "Secret", bob["token"]) == (["Secret menu"], 2)
    warnings = [r.getMessage() for r in caplog.records if "scope()" in r.getMessage()]
    assert warnings == ["policy OwnedPolicy: show() refused records that its scope() let through; index totals "
                        "count them. Express the rule in scope() (exact values or any_of) to keep them exact."]


async def test_a_published_or_mine_scope_keeps_the_search_total_exact(
        api, rules, drafts, ann, bob, caplog, fresh_warnings):
    rules("posts", **HIDE_BY["both"])
    with caplog.at_level(logging.WARNING, logger="restify.policies"):
        for token in (bob["token"], None):
            assert await search(api, "Secret", token) == (["Secret menu"], 1)
            for prefix in ("Secret p", "Secret pl", "Secret plan"):  # the draft's title, guessed on
                assert await search(api, prefix, token) == ([], 0)
        assert await search(api, "Secret", ann["token"]) == (["Secret menu", "Secret plan"], 2)
        # Published later by a partial update: in everyone's scope from then on.
        await api.patch(f"{PREFIX}/posts/{drafts['draft']}", {"published": True}, token=ann["token"])
        assert await search(api, "Secret p", bob["token"]) == (["Secret plan"], 1)
    assert "scope()" not in caplog.text


@pytest.mark.parametrize("scope", [
    lambda user: {"title": {"$ne": None}},
    lambda user: {"title": ["a"]},
    lambda user: "everything",
    lambda user: 1 / 0,
], ids=["operator", "list", "string", "raises"])
async def test_a_malformed_or_failing_scope_reads_nothing_and_is_logged(api, rules, drafts, ann, scope, caplog):
    rules("posts", scope=scope)
    with caplog.at_level(logging.ERROR, logger="restify.policies"):
        listed = (await api.get(f"{PREFIX}/posts", token=ann["token"])).json
        shown = await api.get(f"{PREFIX}/posts/{drafts['published']}", token=ann["token"])
    assert (listed["data"], listed["meta"]["total"]) == ([], 0)
    assert (shown.status, shown.json) == (404, NOT_FOUND)
    assert "policy OwnedPolicy.scope failed; reading nothing" in caplog.text


@pytest.mark.parametrize("hide_by", ["scope", "show"])
async def test_exists_does_not_tell_a_hidden_record_from_a_missing_one(api, db, rules, drafts, bob, hide_by):
    rules("posts", **HIDE_BY[hide_by])
    answers = [await api.post(f"{PREFIX}/comments", {"body": "Found you", "post_id": post_id}, token=bob["token"])
               for post_id in (drafts["draft"], MISSING_ID)]
    assert [(a.status, a.json) for a in answers] == [
        (422, {"message": "The given data was invalid.", "errors": {"post_id": ["The selected post id is invalid."]}})] * 2
    assert await db.collection("comments").count(storage.Filter()) == 0
    visible = await api.post(f"{PREFIX}/comments", {"body": "Hello", "post_id": drafts["published"]}, token=bob["token"])
    assert visible.status == 201
