"""What the posts repository offers beyond its five operations: publishing, and statistics."""
from service import Action, Getter, field


class PublishPosts(Action):
    """Publishes the selected posts (`publish-posts`). Each one is changed through the update path, so
    the update policy (the author), hooks and versions apply as for a PATCH."""

    def fields(self, context):
        return [field("views").numeric().rules("integer", "min:0").nullable()]

    async def handle(self, context, records):
        changes = {"published": True}
        if context.payload.get("views") is not None:
            changes["views"] = context.payload["views"]  # e.g. start the published post's counter afresh
        for post in records:
            await self.update(context, post, changes)


class PostStats(Getter):
    """`post-stats`: on a post, its comments, views and tags; on the collection, how many posts there
    are and how many are published. Counts are of what the caller may see."""

    async def handle(self, context, record=None):
        if record is None:
            everything = await self.index(context, "posts", {"perPage": 1})
            published = await self.index(context, "posts", {"perPage": 1, "published": True})
            return {"posts": everything["meta"]["total"], "published": published["meta"]["total"]}
        comments = await self.index(context, "comments", {"post_id": record.id, "perPage": 1})
        tags = await self.visible(context, "tags", record.tag_ids or [])  # not the ones hidden from the caller
        return {"comments": comments["meta"]["total"], "views": record.views or 0, "tags": len(tags)}
