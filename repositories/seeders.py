"""The demo's records, written through the operations layer by `restify seed`.

`restify seed` calls `seed(seeder)` once on an empty database (`--fresh` empties it first);
`seeder.user(...)` registers a user, `seeder.store(resource, values, user)` stores a record as that
user would through the API, so the repositories' rules, server-set values and policies apply.
"""
import random

from service import Seeder

WORDS = ("tornado motor mongo restify python graphql agent policy field relation page index search "
         "token schema worker model query batch cursor index profile image tag comment post user").split()
PASSWORD = "password"  # every seeded user's


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize()


async def seed(seeder: Seeder) -> None:
    rng = seeder.random
    users = [await seeder.user({"name": f"User {n}", "email": f"user{n}@example.com", "password": PASSWORD,
                                "password_confirmation": PASSWORD, "bio": sentence(rng, 8)})
             for n in range(1, seeder.amount(20) + 1)]
    tags = [(await seeder.store("tags", {"name": name}, users[0]))["id"] for name in sorted(set(rng.sample(WORDS, 10)))]
    posts = []
    for _ in range(seeder.amount(200)):
        author = rng.choice(users)
        post = await seeder.store("posts", {"title": sentence(rng, 5), "body": sentence(rng, 30),
                                            "views": rng.randrange(1000), "published": rng.random() < 0.7}, author)
        await seeder.attach("posts", post["id"], "tags", rng.sample(tags, rng.randint(1, 3)), author)  # as its author
        posts.append(post)
    for _ in range(seeder.amount(600)):
        await seeder.store("comments", {"body": sentence(rng, 12), "post_id": rng.choice(posts)["id"]},
                           rng.choice(users))
