"""Client ID Metadata Documents: a client's `client_id` is an HTTPS URL whose JSON describes it.

Fetching one is a request to an address a stranger chose, so: HTTPS only; every host is resolved
first and refused when any of its addresses is loopback, private, link-local or otherwise not public,
and the request then goes to the very address checked (no second lookup to be rebound); at most
MAX_REDIRECTS redirects, each checked the same way; `oauth.metadata_timeout` for the whole fetch; the
body counted while it arrives and dropped past `oauth.metadata_max_bytes`. Documents are kept
`oauth.metadata_cache_seconds`. The hosts `oauth.private_hosts` names (as written in the URL) may be
private and plain HTTP (tests and development).
"""
import asyncio
import ipaddress
import json
import socket
import time
from typing import Any
from urllib.parse import urljoin, urlsplit

from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.netutil import DefaultLoopResolver, OverrideResolver

from service.config import Settings
from service.core.kernel.errors import OAuthError

MAX_REDIRECTS = 2
MAX_CACHED = 1000
_cache: dict[str, tuple[float, dict[str, Any]]] = {}


class _TooLarge(Exception):
    pass


def _refused(message: str) -> OAuthError:
    return OAuthError("invalid_client", f"The client metadata document {message}.")


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    return ip.is_global and not ip.is_multicast


async def _address(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to: the first of `host`'s, all of which must be public."""
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise _refused(f"host {host} cannot be resolved") from None
    addresses = [str(info[4][0]) for info in found]
    if not addresses or (not allow_private and not all(_public(a) for a in addresses)):
        raise _refused(f"host {host} is not a public address")
    return next((a for a in addresses if ":" not in a), addresses[0])  # IPv4 first, as most servers listen


async def _get(url: str, settings: Settings, deadline: float) -> tuple[int, str, bytes]:
    parts = urlsplit(url)
    allow_private = (parts.hostname or "") in [str(h).lower() for h in settings.value("oauth", "private_hosts")]
    if not parts.hostname or parts.path in ("", "/") or parts.username or parts.password:
        raise _refused("URL must name a host and a path")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = await _address(parts.hostname, port, allow_private)
    if parts.scheme != "https" and not (allow_private and parts.scheme == "http"):
        raise _refused("URL must be HTTPS")
    cap, body = int(settings.positive("oauth", "metadata_max_bytes")), bytearray()

    def collect(chunk: bytes) -> None:
        body.extend(chunk)
        if len(body) > cap:
            raise _TooLarge()
    resolver = OverrideResolver(DefaultLoopResolver(), {(parts.hostname, port): (address, port)})
    client = AsyncHTTPClient(force_instance=True, resolver=resolver)
    left = max(deadline - time.monotonic(), 0.1)
    try:
        response = await client.fetch(HTTPRequest(url, follow_redirects=False, request_timeout=left,
                                                  connect_timeout=left, streaming_callback=collect,
                                                  headers={"Accept": "application/json"}), raise_error=False)
    except Exception:  # noqa: BLE001 - refused, cut short or timed out: the client is told which
        response = None
    finally:
        client.close()
    if len(body) > cap:
        raise _refused(f"is larger than {cap} bytes")
    if response is None or response.code == 599:
        raise _refused("could not be fetched")
    return response.code, response.headers.get("Location", ""), bytes(body)


async def fetch(settings: Settings, url: str) -> dict[str, Any]:
    """The document at `url` (a JSON object), or OAuthError `invalid_client` saying why not."""
    cached = _cache.get(url)
    if cached is not None and cached[0] > time.monotonic():
        return cached[1]
    deadline = time.monotonic() + float(settings.positive("oauth", "metadata_timeout"))
    at = url
    for _ in range(MAX_REDIRECTS + 1):
        code, location, body = await _get(at, settings, deadline)
        if code in (301, 302, 303, 307, 308) and location:
            at = urljoin(at, location)
            continue
        if code != 200:
            raise _refused(f"answered HTTP {code}")
        try:
            document = json.loads(body)
        except ValueError:
            raise _refused("is not JSON") from None
        if not isinstance(document, dict):
            raise _refused("is not a JSON object")
        if len(_cache) >= MAX_CACHED:
            _cache.clear()
        _cache[url] = (time.monotonic() + float(settings.positive("oauth", "metadata_cache_seconds")), document)
        return document
    raise _refused(f"redirects more than {MAX_REDIRECTS} times")
