"""Booleans over REST: a JSON body and a query string read them one way (`description.to_boolean`).
A body once took "yes", "on", "no" and "off" too, which the query string refused; both refuse them now."""
from urllib.parse import quote

import pytest

from tests.booleans import REFUSED, REFUSED_TEXTS, TEXTS, TYPED
from tests.http.test_index_queries import POSTS, bad_request, seed_post, titles

BODY_ERROR = "The published field must be true or false."
FILTER_ERROR = "The published filter must be true or false."


@pytest.mark.parametrize("value, expected", TYPED)
async def test_a_body_reads_a_boolean_as_every_door_does(api, ann, value, expected):
    response = await api.post(POSTS, {"title": "Hello", "published": value}, token=ann["token"])
    assert response.status == 201, response.json
    assert response.json["data"]["attributes"]["published"] is expected
    changed = await api.patch(f"{POSTS}/{response.json['data']['id']}", {"published": value}, token=ann["token"])
    assert changed.status == 200 and changed.json["data"]["attributes"]["published"] is expected


@pytest.mark.parametrize("value", REFUSED)
async def test_a_body_refuses_what_every_door_refuses(api, ann, value):
    response = await api.post(POSTS, {"title": "Hello", "published": value}, token=ann["token"])
    assert (response.status, response.json["errors"]) == (422, {"published": [BODY_ERROR]})


@pytest.mark.parametrize("text, expected", TEXTS)
async def test_a_query_string_reads_a_boolean_as_every_door_does(api, db, text, expected):
    await seed_post(db, "Out", published=True)
    await seed_post(db, "Draft", published=False)
    shown = ["Out"] if expected else ["Draft"]
    assert titles(await api.get(f"{POSTS}?published={text}")) == shown
    assert titles(await api.get(f"{POSTS}?published[eq]={text}")) == shown
    assert titles(await api.get(f"{POSTS}?published[ne]={text}")) == (["Draft"] if expected else ["Out"])
    assert titles(await api.get(f"{POSTS}?published[null]={text}")) == ([] if expected else ["Out", "Draft"])


@pytest.mark.parametrize("text", REFUSED_TEXTS)
async def test_a_query_string_refuses_what_every_door_refuses(api, text):
    bad_request(await api.get(f"{POSTS}?published={quote(text)}"), FILTER_ERROR, {"published": [FILTER_ERROR]})
    bad_request(await api.get(f"{POSTS}?-published={quote(text)}"), FILTER_ERROR, {"published": [FILTER_ERROR]})
    message = "The published[null] filter must be true or false."
    bad_request(await api.get(f"{POSTS}?published[null]={quote(text)}"), message, {"published[null]": [message]})
