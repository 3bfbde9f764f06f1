from service import BelongsTo, BelongsToMany, HasMany, Repository, current_user_id, field

from repositories.post_actions import PostStats, PublishPosts


class PostRepository(Repository):
    mcp = ("index", "show", "store", "update", "delete", "bulk-store", "attach", "detach", "sync", "actions",
           "getters", "aggregate")

    @classmethod
    def related(cls):
        from repositories.comments import CommentRepository
        from repositories.tags import TagRepository
        from repositories.users import UserRepository
        return {
            # `search` also finds posts by their author's name; `sort=user.name` orders by it.
            "user": BelongsTo("user", UserRepository).searchable("name").sortable("name").filterable("name"),
            "comments": HasMany("comments", CommentRepository),
            "tags": BelongsToMany("tags", TagRepository),
        }

    def fields(self, request):
        return [
            field("title").required().rules("max:255").searchable(text=True).sortable(),
            field("body").textarea().nullable(),
            field("views").numeric().rules("integer", "min:0").sortable().matchable().aggregatable().default(0),
            field("published").boolean().matchable().groupable().default(False),
            field("user_id").matchable().groupable().readonly().value(current_user_id),
            field("cover").image().nullable().path("covers").store_as("post-{id}-{rev}.{ext}"),
        ]

    def actions(self, context):
        return [PublishPosts()]

    def getters(self, context):
        return [PostStats()]
