"""How repositories list actions and getters (service/core/operations/extensions.py): an instance method or a
classmethod, classes or instances, checked so that a mistake names the repository."""
import pytest

from service import Action, Context, DeclarationError, Getter, Repository
from service.core.declarations.registry import Resource
from service.core.operations.actions import available
from service.core.operations.extensions import declared
from repositories.models import Post


class Publish(Action):
    pass


class Stats(Getter):
    key = "stats"


def resource(repository: type[Repository]) -> Resource:
    return Resource("posts", repository(), Post)


def test_a_classmethod_listing_classes_works_like_an_instance_method_listing_instances():
    class ByClass(Repository):
        @classmethod
        def actions(cls, context):
            return [Publish]

    class ByInstance(Repository):
        def actions(self, context):
            return [Publish()]

    for repository in (ByClass, ByInstance):
        assert [a.key for a in available(resource(repository), Context(), on_record=False)] == ["publish"]


def test_the_listing_may_depend_on_the_request():
    class ForUsers(Repository):
        def getters(self, context):
            return [Stats()] if context.user is not None else []

    assert declared(resource(ForUsers), "getters", Getter, Context()) == []
    assert [g.key for g in declared(resource(ForUsers), "getters", Getter, Context(user=Post({"id": "1"})))] == \
        ["stats"]


@pytest.mark.parametrize("listed, message", [
    ([Stats()], "Broken.actions() returned <"),
    ([Publish(), Publish()], "Broken.actions() lists the key 'publish' twice"),
])
def test_a_wrong_listing_names_the_repository(listed, message):
    class Broken(Repository):
        def actions(self, context):
            return listed

    with pytest.raises(DeclarationError) as raised:
        declared(resource(Broken), "actions", Action, Context())
    assert str(raised.value).startswith(message)
