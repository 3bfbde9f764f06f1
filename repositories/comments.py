from service import BelongsTo, Repository, current_user_id, field


class CommentRepository(Repository):
    mcp = ("index", "show", "store", "update", "delete")
    soft_deletes = True  # a deleted comment goes to a trash its author may restore from

    @classmethod
    def related(cls):
        from repositories.posts import PostRepository
        from repositories.users import UserRepository
        return {"post": BelongsTo("post", PostRepository), "user": BelongsTo("user", UserRepository)}

    def fields(self, request):
        return [
            field("body").textarea().required().rules("max:5000").searchable(),
            field("post_id").storing_rules("required").rules("exists:posts").matchable(),
            field("user_id").matchable().readonly().value(current_user_id),
        ]
