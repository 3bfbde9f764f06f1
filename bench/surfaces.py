"""The hostile benchmark's attacks on the query, bulk and live surfaces, each bounded in time and clients:

- amplification: `posts?user_id=<me>&perPage=100&related=user.posts` (82 bytes) over 40 posts of
  65,000 characters each, sent by 8 sockets that never read, and once a second by a client that reads,
  with its GraphQL twin (`postList { body user { posts { body } } }`);
- relation search and sort: two clients looping `posts?search=e&sort=user.name&page=5`;
- a 140,000-value `in` filter through the MCP index tool, every 3 s;
- a bulk update that fails because another connection deletes its records meanwhile, in a loop.
"""
import asyncio
import json
import re
import time
from collections import Counter
from dataclasses import dataclass

from bench.wire import HOST, Connection

JSON = {"Content-Type": "application/json"}
MCP = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
BIG_BODY = 65_000  # characters of each of the attacker's posts
BIG_POSTS = 40
NOT_READING = 8
IN_VALUES = 140_000


@dataclass
class Attacker:
    """A registered user with 40 big posts and 10 small ones of their own."""
    token: str
    user_id: str
    small_ids: list[str]

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


async def _bulk_store(connection: Connection, auth: dict[str, str], items: list[dict]) -> list[str]:
    status, raw = await connection.request("POST", "/api/restify/posts/bulk", json.dumps(items).encode(),
                                           {**JSON, **auth}, timeout=120)
    if status != 201:
        raise RuntimeError(f"bulk store answered {status}: {raw[:200]!r}")
    return [record["id"] for record in json.loads(raw)["data"]]


async def prepare_attacker(port: int) -> Attacker:
    connection = Connection(port)
    body = json.dumps({"name": "Mallory", "email": "mallory@example.com", "password": "mallory-pass",
                       "password_confirmation": "mallory-pass"}).encode()
    status, raw = await connection.request("POST", "/api/register", body, JSON)
    if status != 201:
        raise RuntimeError(f"register answered {status}: {raw[:200]!r}")
    registered = json.loads(raw)
    auth = {"Authorization": f"Bearer {registered['meta']['token']}"}
    for batch in range(BIG_POSTS // 10):  # ten to a request keeps each body under the 1 MiB limit
        await _bulk_store(connection, auth, [{"title": f"Big {batch}.{n}", "body": "e" * BIG_BODY}
                                             for n in range(10)])
    small = await _bulk_store(connection, auth, [{"title": f"Small {n}"} for n in range(10)])
    connection.close()
    return Attacker(registered["meta"]["token"], registered["id"], small)


def wanted(only: "re.Pattern[str] | None", part: str) -> bool:
    """Whether an attack part runs: all of them, or those `--only` names."""
    return only is None or only.search(part) is not None


class SurfaceAttacks:
    def __init__(self, port: int, attacker: Attacker, deadline: float,
                 only: "re.Pattern[str] | None" = None) -> None:
        self.port = port
        self.only = only
        self.attacker = attacker
        self.deadline = deadline
        self.statuses: dict[str, Counter] = {}
        self.amplifying = f"/api/restify/posts?user_id={attacker.user_id}&perPage=100&related=user.posts"

    def _count(self, part: str, status: object) -> None:
        self.statuses.setdefault(part, Counter())[status] += 1

    async def _loop(self, part: str, interval: float, send) -> None:
        """`send(connection)` every `interval` seconds (0: back to back) until the deadline."""
        if not wanted(self.only, part):
            return
        connection = Connection(self.port)
        while time.monotonic() < self.deadline:
            started = time.monotonic()
            try:
                self._count(part, await send(connection))
            except Exception as error:  # noqa: BLE001 - closed or timed out: counted, then reconnect
                self._count(part, type(error).__name__)
                connection.close()
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))
        connection.close()

    async def not_reading(self) -> None:
        """Sockets that ask for the amplified answer and read nothing until the deadline."""
        if not wanted(self.only, "amplification, not reading"):
            return
        async def one() -> None:
            reader, writer = await asyncio.open_connection(HOST, self.port)
            request = (f"GET {self.amplifying} HTTP/1.1\r\nHost: {HOST}\r\n"
                       f"Authorization: Bearer {self.attacker.token}\r\n\r\n")
            writer.write(request.encode())
            await asyncio.sleep(max(0.0, self.deadline - time.monotonic()))
            try:
                line = await asyncio.wait_for(reader.readline(), 5)
                self._count("amplification, not reading", int(line.split()[1]) if line else "closed by the server")
            except (asyncio.TimeoutError, ConnectionError, IndexError, ValueError):
                self._count("amplification, not reading", "closed by the server")
            finally:
                writer.close()
        await asyncio.gather(*(one() for _ in range(NOT_READING)), return_exceptions=True)

    async def _get(self, connection: Connection, path: str) -> object:
        status, _ = await connection.request("GET", path, headers=self.attacker.auth, timeout=60)
        return status

    async def _post(self, connection: Connection, path: str, body: dict, headers: dict[str, str]) -> object:
        status, raw = await connection.request("POST", path, json.dumps(body, separators=(",", ":")).encode(),
                                               {**headers, **self.attacker.auth}, timeout=60)
        if path == "/mcp" and status == 200:  # a tool's refusal is a JSON-RPC result with isError
            result = json.loads(raw).get("result", {})
            return "tool error" if result.get("isError") else 200
        if path == "/graphql" and status == 200 and json.loads(raw).get("errors"):
            return "graphql error"
        return status

    def amplification(self) -> list:
        twin = {"query": f'{{ postList(first: 100, filter: {{user_id: {{eq: "{self.attacker.user_id}"}}}}) '
                         '{ body user { posts { body } } } }'}
        return [self.not_reading(),
                self._loop("amplification, read", 1.0, lambda c: self._get(c, self.amplifying)),
                self._loop("amplification, GraphQL", 1.0, lambda c: self._post(c, "/graphql", twin, JSON))]

    def relation_queries(self) -> list:
        path = "/api/restify/posts?search=e&sort=user.name&page=5"
        return [self._loop("relation search and sort", 0.0, lambda c: self._get(c, path)) for _ in range(2)]

    def huge_in(self) -> list:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "posts-index-tool", "arguments": {"filter": {"views": {"in": list(range(IN_VALUES))}}}}}
        return [self._loop(f"MCP in filter, {IN_VALUES:,} values", 3.0, lambda c: self._post(c, "/mcp", call, MCP))]

    async def racing_bulk(self) -> None:
        """One connection bulk-updates the attacker's small posts while another deletes one of them
        and stores a fresh one in its place: the bulk fails and undoes what it wrote."""
        ids = list(self.attacker.small_ids)

        async def update(connection: Connection) -> object:
            items = [{"id": record_id, "title": f"Changed {time.monotonic():.3f}"} for record_id in ids]
            return await self._post(connection, "/api/restify/posts/bulk/update", items, JSON)

        async def replace(connection: Connection) -> object:
            victim = ids[0]
            status, _ = await connection.request("DELETE", f"/api/restify/posts/{victim}",
                                                 headers=self.attacker.auth, timeout=60)
            ids[0] = (await _bulk_store(connection, self.attacker.auth, [{"title": "Fresh"}]))[0]
            ids.append(ids.pop(0))
            return status

        await asyncio.gather(self._loop("bulk update racing deletes", 0.05, update),
                             self._loop("deletes racing the bulk", 0.05, replace))

    async def run(self) -> dict[str, dict]:
        await asyncio.gather(*self.amplification(), *self.relation_queries(), *self.huge_in(), self.racing_bulk())
        return {part: dict(counts) for part, counts in self.statuses.items()}
