"""Actions and getters for tests, installed on the demo posts repository of a test's registry beside
the demo's own (PublishPosts, PostStats): they record what they were handed, so a test can see the
chunks, the payload and the records."""
from typing import Any

from service import Action, Getter, field
from storage import new_id

PREFIX = "/api/restify"


class RecordTitles(Action):
    """Records each chunk's titles; answers nothing, so the run answers `{"affected": n}`."""

    def __init__(self) -> None:
        self.chunks: list[list[str]] = []
        self.payloads: list[dict[str, Any]] = []

    def fields(self, context):
        return [field("reason").required().rules("max:20")]

    async def handle(self, context, records):
        self.chunks.append([record.title for record in records])
        self.payloads.append(dict(context.payload))


class ArchiveEverything(Action):
    """Standalone and destructive; answers a dict of its own."""
    key = "archive"
    standalone = True
    destructive = True
    on_record = True  # a standalone action is still not offered on a record

    async def handle(self, context, records):
        return {"archived": len(records), "by": context.user.id if context.user else None}


class Shout(Getter):
    key = "shout"
    on_index = False

    async def handle(self, context, record=None):
        return record.title.upper()


class Installed:
    def __init__(self, registry: Any) -> None:
        self.record_titles = RecordTitles()
        self.archive = ArchiveEverything()
        repository = registry.get("posts").repository
        demo_actions, demo_getters = repository.actions, repository.getters
        repository.actions = lambda context: [*demo_actions(context), self.record_titles, self.archive]
        repository.getters = lambda context: [*demo_getters(context), Shout()]


def scope_posts_to_their_authors(registry: Any) -> None:
    """Each user reads only their own posts; guests none."""
    policy = registry.policies.for_model(registry.get("posts").model)
    policy.scope = lambda user: {"user_id": user.id} if user is not None else False


async def insert_posts(db: Any, user_id: str, count: int, **values: Any) -> list[str]:
    """Posts written straight to the collection (version 1), as the write path would store them."""
    ids = []
    for n in range(count):
        stored = await db.collection("posts").insert({"title": f"P{n:03}", "views": 0, "published": False,
                                                      "user_id": user_id, "_version": 1, "id": new_id(), **values})
        ids.append(stored["id"])
    return ids
