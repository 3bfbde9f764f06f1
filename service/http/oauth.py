"""OAuth 2.1 routes (service/core/operations/oauth.py says what each does); present when `mcp.auth`
is `oauth`. Form bodies (`application/x-www-form-urlencoded`) as the RFCs send them; JSON answers in
the RFCs' shape; the authorize page carries a CSRF token bound to a cookie (double submit)."""
import hmac
import json
import secrets
from typing import Any
from urllib.parse import parse_qs

from service.core.declarations.app import Restify
from service.core.kernel.errors import NotFound, OAuthError, ValidationFailed
from service.core.operations import oauth, oauth_authorize, oauth_token
from service.http import client_metadata, oauth_page
from service.http.base import JsonHandler

CSRF_COOKIE = "restify_oauth_csrf"


class OAuthHandler(JsonHandler):
    async def admit(self) -> None:
        if not oauth.uses_oauth(self.app):
            raise NotFound()
        await super().admit()

    def form(self) -> dict[str, Any]:
        """The body's parameters: a form (each name once, `scopes` as a list) or a JSON object."""
        body = self.body_bytes
        if self.request.headers.get("Content-Type", "").startswith("application/json"):
            value = self.payload()
            return value if isinstance(value, dict) else {}
        try:
            parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
        except UnicodeDecodeError:
            raise OAuthError("invalid_request", "The body is not UTF-8.") from None
        return {name: values if name == "scopes" else values[0] for name, values in parsed.items()}

    async def fetch_client(self, url: str) -> dict[str, Any]:
        return await client_metadata.fetch(self.app.settings, url)

    def send_oauth(self, body: dict[str, Any], status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(body))


class ProtectedResourceHandler(OAuthHandler):
    async def get(self) -> None:
        self.send_oauth(oauth.protected_resource(self.app, self.context()))


class AuthorizationServerHandler(OAuthHandler):
    async def get(self) -> None:
        self.send_oauth(oauth.authorization_server(self.app, self.context()))


class RegisterHandler(OAuthHandler):
    async def post(self) -> None:
        self.send_oauth(await oauth.register_client(self.app, self.payload(), self.context()), 201)


class TokenHandler(OAuthHandler):
    async def post(self) -> None:
        self.send_oauth(await oauth_token.exchange(self.app, self.form(), self.context()))


class RevokeHandler(OAuthHandler):
    async def post(self) -> None:
        await oauth_token.revoke(self.app, self.form(), self.context())
        self.send_oauth({})


class AuthorizeHandler(OAuthHandler):
    """GET shows the page for a checked request; POST (the page's form) approves or refuses it."""

    async def get(self) -> None:
        params = {name: self.get_query_argument(name) for name in self.request.query_arguments}
        await self._respond(params, None)

    async def post(self) -> None:
        form = self.form()
        sent, kept = str(form.get("csrf", "")), self.get_cookie(CSRF_COOKIE) or ""
        if not sent or not hmac.compare_digest(sent.encode(), kept.encode()):
            self._page(oauth_page.error_page("This form expired or was not sent from this page; start again."), 403)
            return
        await self._respond({k: v for k, v in form.items() if k in oauth_authorize.PARAMETERS}, form)

    async def _respond(self, params: dict[str, str], form: dict[str, Any] | None) -> None:
        context = self.context()
        try:
            pending = await oauth_authorize.check(self.app, params, context, self.fetch_client)
        except oauth_authorize.Refused as refused:
            self.redirect(refused.redirect_to)
            return
        except OAuthError as error:
            self._page(oauth_page.error_page(error.message), 400)
            return
        problem = ""
        if form is not None:
            try:
                self.redirect(await oauth_authorize.approve(self.app, pending, form, context))
                return
            except ValidationFailed as error:
                problem = " ".join(message for messages in error.errors.values() for message in messages)
        csrf = secrets.token_urlsafe(32)
        self.set_cookie(CSRF_COOKIE, csrf, path="/oauth", httponly=True, samesite="Strict",
                        secure=self.request.protocol == "https")
        service = str(self.app.settings.value("openapi", "title"))
        self._page(oauth_page.consent_page(pending, csrf, service, problem), 422 if problem else 200,
                   pending.redirect_uri)

    def _page(self, html: str, status: int, redirect_uri: str | None = None) -> None:
        self.set_status(status)
        for name, value in oauth_page.security_headers(redirect_uri).items():
            self.set_header(name, value)
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.finish(html)


def oauth_routes(app: Restify) -> list[tuple]:
    """The OAuth routes, each named by its template."""
    state = {"app": app}
    known = "/.well-known/oauth-protected-resource"
    templates = [(known, ProtectedResourceHandler), (f"{known}{oauth.RESOURCE_PATH}", ProtectedResourceHandler),
                 ("/.well-known/oauth-authorization-server", AuthorizationServerHandler),
                 ("/oauth/register", RegisterHandler), ("/oauth/authorize", AuthorizeHandler),
                 ("/oauth/token", TokenHandler), ("/oauth/revoke", RevokeHandler)]
    return [(template, handler, state, template) for template, handler in templates]
