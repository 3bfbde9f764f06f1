"""Thin REST handlers: read the request, build a context, call an operation."""
from service.core.operations import aggregating, auth, crud as operations, profile, trash
from service.http.base import JsonHandler, posting


class CollectionHandler(JsonHandler):
    path_suffix = ""  # what follows the collection's URL in this route

    async def get(self, name: str) -> None:
        context = self.measured_context()
        await self.send_json(await operations.index(self.app, name, context), measured=context.budget)

    async def post(self, name: str) -> None:
        payload = self.payload(allow_multipart=True)
        body = await operations.store(self.app, name, payload, self.context(), files=self.files)
        collection = self.request.full_url().split("?")[0].removesuffix(self.path_suffix)
        self.set_header("Location", f"{collection}/{body['data']['id']}")
        await self.send_json(body, 201)


class AggregateHandler(JsonHandler):
    """`GET <prefix>/<r>/aggregate`: records counted and summed by group."""

    async def get(self, name: str) -> None:
        await self.send_json(await aggregating.aggregate(self.app, name, self.context()))


class CollectionUploadHandler(JsonHandler):
    """`POST <prefix>/<r>/upload`: the store above, the route the OpenAPI document gives to
    multipart (one media type per operation); POST `<prefix>/<r>` keeps reading multipart too."""
    path_suffix = "/upload"
    post = CollectionHandler.post


class RecordHandler(JsonHandler):
    """One record. Writes honour `If-Match` (the version show's ETag carries) atomically."""

    async def get(self, name: str, id: str) -> None:
        await self.send_versioned(await operations.show(self.app, name, id, self.context()))

    async def put(self, name: str, id: str) -> None:
        await self.send_json(await operations.update(self.app, name, id, self.payload(), self.context(),
                                                     versions=self.if_match()))

    async def patch(self, name: str, id: str) -> None:
        await self.send_json(await operations.update(self.app, name, id, self.payload(), self.context(), partial=True,
                                                     versions=self.if_match()))

    async def post(self, name: str, id: str) -> None:
        # PUT semantics, but multipart is accepted so file fields can be sent.
        payload = self.payload(allow_multipart=True)
        await self.send_json(await operations.update(self.app, name, id, payload, self.context(), files=self.files,
                                                     versions=self.if_match()))

    async def delete(self, name: str, id: str) -> None:
        await operations.delete(self.app, name, id, self.context(), versions=self.if_match())
        self.no_content()


class RestoreHandler(JsonHandler):
    """`POST <prefix>/<r>/<id>/restore`: a trashed record back (repositories with soft deletes)."""

    async def post(self, name: str, id: str) -> None:
        await self.send_json(await trash.restore(self.app, name, id, self.context(), versions=self.if_match()))


class RecordUploadHandler(JsonHandler):
    """`POST <prefix>/<r>/<id>/upload`: the multipart update's own route (as CollectionUploadHandler)."""
    post = RecordHandler.post


RegisterHandler = posting(auth.register, 201)
LoginHandler = posting(auth.login)


class LogoutHandler(JsonHandler):
    async def post(self) -> None:
        await auth.logout(self.app, self.payload(), self.context())
        self.no_content()


class ProfileHandler(JsonHandler):
    """The logged-in user's own record, unwrapped. PUT is JSON only; POST takes multipart files."""

    async def get(self) -> None:
        await self.send_json(await profile.show(self.app, self.context()))

    async def put(self) -> None:
        await self.send_json(await profile.update(self.app, self.payload(), self.context()))

    async def post(self) -> None:
        payload = self.payload(allow_multipart=True)
        await self.send_json(await profile.update(self.app, payload, self.context(), files=self.files))


class ProfileUploadHandler(JsonHandler):
    """`POST <prefix>/profile/upload`: the multipart profile update's own route."""
    post = ProfileHandler.post
