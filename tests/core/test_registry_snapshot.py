"""One registry per operation: a reload while an operation awaits does not reach into it, and
every registry the application serves gets its own unique indexes before it writes."""
import asyncio
import uuid

import pytest

from service.core.declarations.context import Context
from service.core.declarations.registry import load_app
from service.core.kernel.errors import Forbidden
from service.core.operations import auth, crud as operations
from storage import DuplicateKey

PASSWORD = "secret-pass"


async def _user(restify) -> Context:
    context = Context()
    await auth.create_user(restify, {"name": "Ann", "email": f"ann.{uuid.uuid4().hex[:6]}@example.com",
                                     "password": PASSWORD, "password_confirmation": PASSWORD}, context)
    return Context(user=context.user)


def _edited(app_dir, module: str, old: str, new: str):
    path = app_dir / "repositories" / module
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return load_app(app_dir)


@pytest.fixture
def frozen_posts(app_copy):
    """The demo's repositories, reloaded with a policy under which nobody may update a post."""
    return _edited(app_copy, "policies.py", "POLICIES = {User: UserPolicy, Post: OwnedPolicy,",
                   "class Frozen(OwnedPolicy):\n    def update(self, user, record):\n        return False\n\n\n"
                   "POLICIES = {User: UserPolicy, Post: Frozen,")


@pytest.fixture
def unique_titles(app_copy):
    """The demo's repositories, reloaded with titles unique across posts."""
    return _edited(app_copy, "posts.py", 'field("title").required().rules("max:255")',
                   'field("title").required().rules("max:255", "unique:posts,title")')


async def test_an_update_keeps_the_registry_it_started_with_through_a_reload(restify, frozen_posts):
    ann = await _user(restify)
    post = (await operations.store(restify, "posts", {"title": "Old"}, ann))["data"]
    started = asyncio.ensure_future(operations.update(restify, "posts", post["id"], {"title": "New"},
                                                      Context(user=ann.user), partial=True))
    await asyncio.sleep(0)  # the update has read its registry and waits on the database
    restify.swap_registry(frozen_posts)
    updated = (await started)["data"]
    # Authorized, written and answered under the registry it started with, flags included.
    assert updated["attributes"]["title"] == "New"
    assert updated["meta"]["authorizedToUpdate"] is True
    # The next operation serves the new one.
    with pytest.raises(Forbidden):
        await operations.update(restify, "posts", post["id"], {"title": "Newer"}, Context(user=ann.user),
                                partial=True)


def test_operations_share_one_view_of_a_registry_until_it_is_swapped(restify, frozen_posts):
    first = restify.pinned()
    assert restify.pinned() is first and first.pinned() is first and first.origin is restify
    restify.swap_registry(frozen_posts)
    second = restify.pinned()
    assert second is not first and second.registry is frozen_posts and first.registry is not frozen_posts
    assert restify.pinned() is second


async def test_a_registry_assigned_after_the_first_write_gets_its_unique_indexes(restify, unique_titles):
    ann = await _user(restify)  # the first registry's indexes are made
    restify.registry = unique_titles
    await operations.store(restify, "posts", {"title": "Same"}, ann)
    # A second writer the check before the write missed (a race) is refused by the index.
    with pytest.raises(DuplicateKey):
        await restify.db.collection("posts").insert({"title": "Same"})


async def test_a_reload_while_indexes_are_made_does_not_mark_the_new_registry_indexed(restify, unique_titles):
    making = asyncio.ensure_future(restify.ready())
    await asyncio.sleep(0)  # the first registry's indexes are being made
    restify.swap_registry(unique_titles)
    await making
    ann = await _user(restify)
    await operations.store(restify, "posts", {"title": "Same"}, ann)
    with pytest.raises(DuplicateKey):
        await restify.db.collection("posts").insert({"title": "Same"})
