"""Fields by policy over REST: absent where the user may not see them, unknown to their filters,
sorts and fieldsets, and a 403 naming the field a user may not store or change."""
from storage import Filter
from tests.field_policies import field_policies  # noqa: F401  (a fixture)

PREFIX = "/api/restify/posts"


async def _post(api, token: str, **values) -> dict:
    response = await api.post(PREFIX, {"title": "Hello", "body": "Text", **values}, token=token)
    assert response.status == 201, response.body
    return response.json["data"]


async def test_a_field_shows_only_where_can_see_allows(field_policies, api, ann, bob):
    post = await _post(api, ann["token"], views=7)
    assert post["attributes"]["views"] == 7  # the author's own answer
    shown = (await api.get(f"{PREFIX}/{post['id']}", token=ann["token"])).json["data"]["attributes"]
    assert shown["views"] == 7 and shown["body"] == "Text"
    for token in (bob["token"], None):
        shown = (await api.get(f"{PREFIX}/{post['id']}", token=token)).json["data"]["attributes"]
        assert "views" not in shown and shown["body"] == "Text"


async def test_hide_on_index_leaves_a_field_out_of_lists_only(field_policies, api, ann):
    await _post(api, ann["token"])
    listed = (await api.get(PREFIX, token=ann["token"])).json["data"][0]["attributes"]
    assert "body" not in listed and listed["views"] == 0 and listed["title"] == "Hello"


async def test_a_field_one_may_not_see_cannot_be_filtered_sorted_or_selected(field_policies, api, ann):
    await _post(api, ann["token"], views=3)
    # a plain `<name>=v` of an unknown name is ignored: so is one of a field the user may not see
    assert len((await api.get(f"{PREFIX}?views=999", token=ann["token"])).json["data"]) == 1
    for query, name in (("views[gte]=1", "views[gte]"), ("-views=3", "-views"),
                        ("sort=-views", "sort"), ("fields=title,views", "fields"),
                        ("fields[posts]=body", "fields[posts]")):
        response = await api.get(f"{PREFIX}?{query}", token=ann["token"])
        assert response.status == 400, query
        assert name in response.json["errors"], response.json
    # the same words as for a field that does not exist
    unknown = (await api.get(f"{PREFIX}?nothing[gte]=1", token=ann["token"])).json
    hidden = (await api.get(f"{PREFIX}?views[gte]=1", token=ann["token"])).json
    assert hidden["message"] == unknown["message"].replace("nothing", "views")
    assert (await api.get(f"{PREFIX}?fields=title,body", token=ann["token"])).status == 400  # not in lists


async def test_storing_or_changing_a_field_one_may_not_is_forbidden_naming_it(field_policies, api, db, ann, bob):
    refused = await api.post(PREFIX, {"title": "Mine", "published": True}, token=bob["token"])
    assert (refused.status, refused.json["message"]) == (403, "You may not set the field 'published'.")
    assert await db.collection("posts").count(Filter()) == 0
    post = await _post(api, ann["token"], published=True)
    assert post["attributes"]["published"] is True
    ok = await api.patch(f"{PREFIX}/{post['id']}", {"published": False}, token=ann["token"])
    assert ok.status == 200 and ok.json["data"]["attributes"]["published"] is False
    theirs = await _post(api, bob["token"])
    refused = await api.patch(f"{PREFIX}/{theirs['id']}", {"published": True}, token=bob["token"])
    assert (refused.status, refused.json["message"]) == (403, "You may not change the field 'published'.")
    assert (await db.collection("posts").find_by_id(theirs["id"]))["published"] is False
    renamed = await api.patch(f"{PREFIX}/{theirs['id']}", {"title": "Renamed"}, token=bob["token"])
    assert renamed.status == 200  # the other fields stay his to change


async def test_a_rule_that_raises_denies(registry, api, ann):
    repository = registry.get("posts").repository
    declared = type(repository).fields

    def broken(user, record):
        raise RuntimeError("broken rule")

    repository.fields = lambda request: [f.can_see(broken) if f.name == "views" else
                                         f.can_store(broken) if f.name == "published" else f
                                         for f in declared(repository, request)]
    try:
        created = await api.post(PREFIX, {"title": "Hello"}, token=ann["token"])
        assert created.status == 201 and "views" not in created.json["data"]["attributes"]
        refused = await api.post(PREFIX, {"title": "Hello", "published": True}, token=ann["token"])
        assert (refused.status, refused.json["message"]) == (403, "You may not set the field 'published'.")
    finally:
        del repository.fields
