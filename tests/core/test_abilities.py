"""Which ability covers which, and who may ask: `Context.can`, `Policy.can` (a token's abilities ride on
the user its request came with; without a token nothing is limited)."""
import pytest

from service import Policy
from service.core.declarations import Context, Model, grants
from service.core.kernel import MissingAbility


@pytest.mark.parametrize("held, wanted, covered", [
    (["*"], "posts:write", True),
    (["*"], "*", True),
    (["posts:read"], "posts:read", True),
    (["posts:read"], "posts:write", False),
    (["posts:read"], "comments:read", False),
    (["posts:write"], "posts:read", True),            # every write answers the record
    (["posts:write"], "posts:publish-posts", True),   # and runs the repository's actions
    (["posts:write"], "comments:read", False),
    (["posts:write"], "*", False),
    (["posts:publish-posts"], "posts:publish-posts", True),
    (["posts:publish-posts"], "posts:read", False),
    ([], "posts:read", False),
])
def test_which_ability_covers_which(held, wanted, covered):
    assert grants(held, wanted) is covered


def user(abilities=None) -> Model:
    attributes = {"id": "u1"} if abilities is None else {"id": "u1", "_abilities": abilities}
    return Model(attributes)


def test_a_context_asks_the_token_of_its_user_and_a_context_without_one_can_everything():
    assert Context(user=user(["posts:read"])).can("posts:read")
    assert not Context(user=user(["posts:read"])).can("posts:write")
    assert Context().can("posts:write") and Context(user=user()).can("*")  # the console; a user without a token
    with pytest.raises(MissingAbility) as caught:
        Context(user=user(["posts:read"])).require("posts:write")
    assert (caught.value.status, caught.value.body()) == (403, {
        "message": 'This token lacks the ability "posts:write".', "code": "MISSING_ABILITY", "ability": "posts:write"})


def test_an_operation_may_lend_abilities_beyond_the_token():
    context = Context(user=user(["posts:publish-posts"]), granted=frozenset({"posts:write"}))
    assert context.can("posts:write") and context.can("posts:read") and not context.can("comments:read")


def test_a_policy_asks_with_the_user_it_gets():
    assert Policy.can(user(["posts:publish-posts"]), "posts:publish-posts")
    assert not Policy.can(user(["posts:read"]), "posts:publish-posts")
    assert Policy.can(None, "posts:write")  # a guest has no token to limit
