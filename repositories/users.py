from service import HasMany, Repository, field


def _self(user, record) -> bool:
    return user is not None and record is not None and record.id == user.id


class UserRepository(Repository):
    mcp = ("index", "show", "profile")

    @classmethod
    def related(cls):
        from repositories.posts import PostRepository
        return {"posts": HasMany("posts", PostRepository)}

    @classmethod
    def can_use_for_profile(cls, request):
        return True

    def fields(self, request):
        return [
            field("name").required().rules("max:255").searchable().sortable(),
            # Changing the email or the password needs the current password (Laravel's `current_password`).
            # A user's own email only: others neither read it nor filter by it (`record=None`: nobody may).
            field("email").required().rules("email", "max:255", "unique:users,email").updating_rules("current_password")
            .can_see(_self),
            field("password").password().storing_rules("required", "min:8", "confirmed")
            .updating_rules("min:8", "confirmed", "current_password"),
            field("bio").textarea().nullable().rules("max:2000"),
            field("avatar").image().nullable().path("avatars"),
            # Worked out per page, never stored: one query counts the posts of every user answered.
            field("post_count").integer().computed_many(
                lambda users, context: context.count_by("posts", "user_id", [user.id for user in users])),
        ]
