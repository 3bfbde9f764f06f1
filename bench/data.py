"""The benchmark's data set: the demo's records inserted directly, in bulk and fast.

Not an application seeder (that is `repositories/seeders.py`, run by `restify seed` through the
operations layer): the benchmark needs 100 users, 1,000 posts and 5,000 comments with tags in
seconds, shaped exactly as the operations store them; the query benchmark adds 100,000 posts
in insert batches."""
import random

from service.core.declarations.app import Restify
from service.core.operations.crud import now
from storage import Filter

from repositories.seeders import WORDS, sentence as _sentence


async def _tag(db, name: str, stamp: dict) -> str:
    """The id of the tag called `name`, made if missing (tag names are unique)."""
    found = await db.collection("tags").find_one(Filter(equals={"name": name}))
    return found["id"] if found else (await db.collection("tags").insert({"name": name, **stamp}))["id"]


def _post(rng: random.Random, user_ids: list[str], tag_ids: list[str], stamp: dict) -> dict:
    """A post as the operations store it."""
    return {"title": _sentence(rng, 5), "body": _sentence(rng, 30), "views": rng.randrange(1000),
            "published": rng.random() < 0.7, "user_id": rng.choice(user_ids), "cover": None,
            "tag_ids": rng.sample(tag_ids, min(3, len(tag_ids))), **stamp}


async def seed(app: Restify, users: int = 20, posts: int = 200, comments: int = 600, tags: int = 10,
               seed_value: int = 7) -> dict[str, int]:
    """Inserts records directly (fast), shaped exactly as the operations store them.
    Every seeded user has the password `password`."""
    rng = random.Random(seed_value)
    stamp = {"created_at": now(), "updated_at": now()}
    password = await app.passwords.hash("password")
    await app.ready()
    db = app.db
    tag_ids = [await _tag(db, word, stamp) for word in rng.sample(WORDS, min(tags, len(WORDS)))]
    first = await db.collection("users").count(Filter())  # seeding again adds users, never clashes
    user_ids = [(await db.collection("users").insert({
        "name": f"User {n}", "email": f"user{n}@example.com", "password": password,
        "bio": _sentence(rng, 8), "avatar": None, **stamp}))["id"] for n in range(first + 1, first + users + 1)]
    post_ids = []
    for _ in range(posts):
        post = await db.collection("posts").insert(_post(rng, user_ids, tag_ids, stamp))
        post_ids.append(post["id"])
    for _ in range(comments):
        await db.collection("comments").insert({
            "body": _sentence(rng, 12), "post_id": rng.choice(post_ids), "user_id": rng.choice(user_ids), **stamp})
    return {"users": users, "posts": posts, "comments": comments, "tags": len(tag_ids)}


async def seed_many_posts(app: Restify, posts: int, batch: int = 5000, seed_value: int = 11) -> int:
    """Adds `posts` posts by the users and with the tags already seeded (see `seed`), `batch` to an
    insert command: 100,000 in a few seconds. Returns how many were inserted."""
    rng = random.Random(seed_value)
    stamp = {"created_at": now(), "updated_at": now()}
    db = app.db
    user_ids = [u["id"] for u in await db.collection("users").find(Filter())]
    tag_ids = [t["id"] for t in await db.collection("tags").find(Filter())]
    inserted = 0
    while inserted < posts:
        size = min(batch, posts - inserted)
        inserted += await db.collection("posts").insert_many(_post(rng, user_ids, tag_ids, stamp) for _ in range(size))
    return inserted
