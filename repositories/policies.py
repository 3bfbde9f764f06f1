"""Who may do what: guests read posts, comments and tags; owners change their own."""
from service import Policy
from repositories.models import Comment, Post, Tag, User


def _owns(user, record) -> bool:
    return user is not None and record.user_id == user.id


class UserPolicy(Policy):
    def allow_restify(self, user):
        return True

    def scope(self, user):
        return user is not None  # guests list no users, and learn no count either

    def show(self, user, record):
        return user is not None

    def store(self, user):
        return False  # accounts are made through /api/register

    def update(self, user, record):
        return user is not None and record.id == user.id

    def delete(self, user, record):
        return self.update(user, record)


class OwnedPolicy(Policy):
    """Posts and comments: anyone reads, a user writes, the owner changes."""

    def allow_restify(self, user):
        return True

    def show(self, user, record):
        return True

    def store(self, user):
        return user is not None

    def update(self, user, record):
        return _owns(user, record)

    def delete(self, user, record):
        return _owns(user, record)

    def attach_tags(self, user, record, tag):
        """A post's tags: its author attaches any tag they can see (detach and sync: `update` decides)."""
        return _owns(user, record)
    def run_action(self, user, record, action):
        # An action on records (publish-posts): only their author; a standalone one: any user.
        return _owns(user, record) if record is not None else user is not None


class TagPolicy(OwnedPolicy):
    """Tags belong to nobody: any user may change them."""

    def update(self, user, record):
        return user is not None

    def delete(self, user, record):
        return user is not None


POLICIES = {User: UserPolicy, Post: OwnedPolicy, Comment: OwnedPolicy, Tag: TagPolicy}
