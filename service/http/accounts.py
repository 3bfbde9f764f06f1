"""REST handlers of accounts by mail: forgot and reset a password, confirm an address."""
from service.core.operations import accounts
from service.http.base import JsonHandler, posting


ForgotPasswordHandler = posting(accounts.forgot_password, 202)
ResetPasswordHandler = posting(accounts.reset_password)


class VerifyEmailHandler(JsonHandler):
    async def get(self, user_id: str, hashed: str) -> None:
        await self.send_json(await accounts.verify_email(self.app, user_id, hashed, self.context()))


class ResendVerificationHandler(JsonHandler):
    async def post(self) -> None:
        await self.send_json(await accounts.resend_verification(self.app, self.context()), 202)


def routes(auth_prefix: str) -> list[tuple[str, type[JsonHandler]]]:
    """Route templates under the auth prefix; `resend` comes before the link's `{id}/{hash}`."""
    return [
        (f"{auth_prefix}/forgot-password", ForgotPasswordHandler),
        (f"{auth_prefix}/reset-password", ResetPasswordHandler),
        (f"{auth_prefix}/verify-email/resend", ResendVerificationHandler),
        (f"{auth_prefix}/verify-email/{{id}}/{{hash}}", VerifyEmailHandler),
    ]
