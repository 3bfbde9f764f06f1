async def test_store_then_show_round_trip(api, db):
    user = await api.register("Ann")
    created = await api.post("/api/restify/posts", {"title": "Hello", "user_id": "someone-else", "rogue": 1},
                             token=user["token"])
    assert created.status == 201
    post_id = created.json["data"]["id"]
    assert created.headers["Location"].endswith(f"/api/restify/posts/{post_id}")
    shown = await api.get(f"/api/restify/posts/{post_id}")
    assert shown.status == 200
    assert shown.json["data"]["attributes"]["user_id"] == user["id"]
    stored = await db.collection("posts").find_by_id(post_id)
    assert "rogue" not in stored and stored["user_id"] == user["id"]
