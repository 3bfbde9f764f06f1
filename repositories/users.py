from service import HasMany, Repository, field


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
            field("email").required().rules("email", "max:255", "unique:users,email").updating_rules("current_password")
            .matchable(),
            field("password").password().storing_rules("required", "min:8", "confirmed")
            .updating_rules("min:8", "confirmed", "current_password"),
            field("bio").textarea().nullable().rules("max:2000"),
            field("avatar").image().nullable().path("avatars"),
        ]
