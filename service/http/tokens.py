"""The user's own tokens over REST: list, create, revoke (service/core/operations/tokens.py)."""
from service.core.operations import tokens
from service.http.base import JsonHandler


class TokensHandler(JsonHandler):
    async def get(self) -> None:
        await self.send_json(await tokens.listing(self.app, self.context()))

    async def post(self) -> None:
        await self.send_json(await tokens.create(self.app, self.payload(), self.context()), 201)


class TokenHandler(JsonHandler):
    async def delete(self, id: str) -> None:
        await tokens.revoke(self.app, id, self.context())
        self.no_content()
