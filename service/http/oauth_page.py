"""The sign-in and consent page of `/oauth/authorize`: one small self-contained HTML document (no
script, no external asset), every value escaped."""
from html import escape
from urllib.parse import urlsplit

from service.core.operations.oauth_authorize import Pending

STYLE = ("body{font:16px system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}"
         "label{display:block;margin:.6rem 0}input[type=email],input[type=password]{width:100%;padding:.4rem}"
         "button{padding:.5rem 1rem;margin:.8rem .5rem 0 0}.error{color:#b00020}fieldset{margin:1rem 0}")


def security_headers(redirect_uri: str | None = None) -> dict[str, str]:
    """No framing (clickjacking), no script, forms only to here and to the client's redirect URI
    (Chromium checks `form-action` on the redirect that follows a form)."""
    targets = "'self'"
    if redirect_uri:
        parts = urlsplit(redirect_uri)
        targets += f" {parts.scheme}://{parts.netloc}" if parts.netloc else f" {parts.scheme}:"
    policy = (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action {targets}; "
              "frame-ancestors 'none'; base-uri 'none'")
    return {"Content-Security-Policy": policy, "X-Frame-Options": "DENY", "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"}


def _document(title: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            '<meta name="viewport" content="width=device-width"><link rel="icon" href="data:,">'
            f"<style>{STYLE}</style></head>"
            f"<body>{body}</body></html>")


def error_page(message: str) -> str:
    return _document("Sign-in refused", f'<h1>This sign-in cannot go on</h1><p class="error">{escape(message)}</p>')


def consent_page(pending: Pending, csrf: str, service: str, problem: str = "") -> str:
    hidden = "".join(f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in pending.params.items())
    scopes = "".join(f'<label><input type="checkbox" name="scopes" value="{escape(s)}" checked> '
                     f"{escape('everything you may do' if s == '*' else s)}</label>" for s in pending.scopes)
    error = f'<p class="error" role="alert">{escape(problem)}</p>' if problem else ""
    body = (f"<h1>Sign in to {escape(service)}</h1>"
            f"<p><strong>{escape(pending.client['client_name'])}</strong> asks to act for you. "
            f"It will be sent back to <strong>{escape(pending.redirect_host)}</strong>.</p>{error}"
            f'<form method="post" action="/oauth/authorize">{hidden}'
            f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
            '<label>Email <input type="email" name="email" autocomplete="username"></label>'
            '<label>Password <input type="password" name="password" autocomplete="current-password"></label>'
            f"<fieldset><legend>It may</legend>{scopes}</fieldset>"
            '<button type="submit" name="decision" value="approve">Approve</button>'
            '<button type="submit" name="decision" value="refuse">Refuse</button></form>')
    return _document(f"Sign in to {service}", body)
