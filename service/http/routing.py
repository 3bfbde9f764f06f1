"""Routes found with one regular expression rather than one per rule.

Tornado's router tries its rules in order, each through a Python call and its own pattern: the
repository routes come after forty-odd others, so a plain show tested some forty patterns before its
own. `FirstMatchRouter` joins every rule's pattern into one alternation, which the `re` module also
tries in order, so the first rule whose pattern matches is known after one match in C; from it the
rules are tried as Tornado tries them (its match gives the path arguments, and a matcher that narrows
its pattern, such as the GraphQL path's for WebSocket upgrades only, may still refuse). Where the
patterns cannot be joined (a rule that is not a path pattern, named groups used twice, an inline flag),
it is Tornado's own loop.
"""
import re
from typing import Any

from tornado import httputil
from tornado.routing import AnyMatches, PathMatches, Rule
from tornado.web import Application, _ApplicationRouter


class FirstMatchRouter(_ApplicationRouter):
    """An application's router that finds the first matching rule with one alternation of the rules' patterns."""

    _alternation: re.Pattern[str] | None = None
    _joined = False  # the alternation is made on the first request, after every rule is in

    def add_rules(self, rules: Any) -> None:
        super().add_rules(rules)
        self._joined = False

    def _join(self) -> re.Pattern[str] | None:
        paths = [rule.matcher for rule in self.rules if isinstance(rule.matcher, PathMatches)]
        if len(paths) != len(self.rules):
            return None
        try:
            return re.compile("|".join(f"(?P<_r{position}>{path.regex.pattern})"
                                       for position, path in enumerate(paths)))
        except re.error:
            return None

    def find_handler(self, request: httputil.HTTPServerRequest, **kwargs: Any) -> httputil.HTTPMessageDelegate | None:
        if not self._joined:
            self._alternation, self._joined = self._join(), True
        if self._alternation is None:
            return super().find_handler(request, **kwargs)
        found = self._alternation.match(request.path)
        if found is None:
            return None
        # The rule's own group closes last: the groups of its pattern are inside it.
        first = int(found.lastgroup[2:])  # type: ignore[index]
        for rule in self.rules[first:]:
            target_params = rule.matcher.match(request)
            if target_params is None:
                continue
            if rule.target_kwargs:
                target_params["target_kwargs"] = rule.target_kwargs
            delegate = self.get_target_delegate(rule.target, request, **target_params)
            if delegate is not None:
                return delegate
        return None


class RoutedApplication(Application):
    """`Application` whose rules are found by `FirstMatchRouter`."""

    def __init__(self, handlers: list[Any] | None = None, **settings: Any) -> None:
        super().__init__(handlers, **settings)
        # As Application.__init__ builds its routers, with ours for the rules.
        self.wildcard_router = FirstMatchRouter(self, handlers)
        self.default_router = _ApplicationRouter(self, [Rule(AnyMatches(), self.wildcard_router)])
