"""Request ids (`X-Request-Id` honoured when sane, else made up; always echoed) and the access line
each request leaves: id, door, method, route template, status, duration, user id; never a token."""
import logging

import pytest


@pytest.fixture
def access(caplog):
    """The access lines logged during the test (log records)."""
    caplog.set_level(logging.DEBUG, logger="restify.access")
    return lambda: [record for record in caplog.records if record.name == "restify.access"]


async def test_a_sane_request_id_is_kept_and_echoed(api):
    for sent in ("3f2a9c1e-7b4d-4e5f-9a8b-0c1d2e3f4a5b", "req:42.a_b/c+d=", "x" * 128):
        response = await api.get("/api/restify/tags", headers={"X-Request-Id": sent})
        assert response.headers["X-Request-Id"] == sent


@pytest.mark.parametrize("sent", ["x" * 129, "has space", "quote\"d", "semi;colon", "é"])
async def test_an_unsafe_request_id_is_replaced(api, sent):
    response = await api.get("/api/restify/tags", headers={"X-Request-Id": sent})
    made = response.headers["X-Request-Id"]
    assert made != sent and len(made) <= 128 and made.replace("-", "").isalnum()


async def test_every_answer_carries_a_fresh_id_errors_included(api):
    answers = [await api.get("/api/restify/tags"), await api.get("/api/restify/tags"),
               await api.get("/nowhere"), await api.get("/api/restify/profile", token="1|bad"),
               await api.post("/graphql", {"query": "{ __typename }"})]
    assert [a.status for a in answers] == [200, 200, 404, 401, 200]
    ids = [a.headers["X-Request-Id"] for a in answers]
    assert len(set(ids)) == len(ids)


async def test_one_access_line_per_request_with_the_template_and_user_but_no_token(api, ann, access):
    created = await api.post("/api/restify/tags?token=leaked", {"name": "go"}, token=ann["token"],
                             headers={"X-Request-Id": "trace-1"})
    tag_id = created.json["data"]["id"]
    await api.get(f"/api/restify/tags/{tag_id}", headers={"X-Request-Id": "trace-2"})
    await api.get("/api/restify/nothing-here/1", headers={"X-Request-Id": "trace-3"})
    lines = [record for record in access() if record.access["request_id"].startswith("trace-")]
    assert [{k: v for k, v in line.access.items() if k != "duration_ms"} for line in lines] == [
        {"request_id": "trace-1", "door": "rest", "method": "POST", "route": "/api/restify/{resource}",
         "status": 201, "user_id": ann["id"]},
        {"request_id": "trace-2", "door": "rest", "method": "GET", "route": "/api/restify/{resource}/{id}",
         "status": 200, "user_id": None},
        {"request_id": "trace-3", "door": "rest", "method": "GET", "route": "/api/restify/{resource}/{id}",
         "status": 404, "user_id": None},
    ]
    assert all(isinstance(line.access["duration_ms"], float) and line.access["duration_ms"] >= 0 for line in lines)
    assert lines[0].getMessage().startswith("trace-1 rest POST /api/restify/{resource} 201 ")
    assert lines[0].getMessage().endswith(f"ms user={ann['id']}")
    text = repr([(line.getMessage(), line.access) for line in access()])
    assert ann["token"] not in text and ann["token"].split("|")[-1] not in text and "leaked" not in text
    assert tag_id not in text


async def test_successes_are_info_problems_warning_and_probes_debug(api, access):
    await api.get("/api/restify/tags")
    await api.get("/nowhere")
    await api.get("/healthz")
    assert [(line.access["route"], line.levelname) for line in access()] == [
        ("/api/restify/{resource}", "INFO"), ("unmatched", "WARNING"), ("/healthz", "DEBUG")]
