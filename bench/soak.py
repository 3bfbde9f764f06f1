"""Soak: many concurrent clients over REST, GraphQL and MCP at once, then invariants in the database.

    python -m bench.soak [--seconds 60] [--workers 32] [--processes 1] [--disk local|gridfs]
                         [--seed N] [--real-hashing]

Starts an embedded nx-27017 and `restify serve` (like `bench.run`), registers a few users,
then runs `--workers` clients for `--seconds`, each doing random stores, updates (PUT, PATCH,
GraphQL, MCP), deletes, reads, same-name tag creates, same-email registrations, cover and
avatar uploads that race each other, uploads that must fail, and tag attaches and detaches on
posts that every worker updates. Every answer is written in a
ledger (acknowledged: 200/201/204, GraphQL data without errors, MCP results without isError;
or refused, and why). Then the database and the file disk are checked against the ledger:
every acknowledged write is there with the acknowledged values (or a later acknowledged
update's), nothing acknowledged-deleted remains, unique rules hold, counts match, no record is
partially written, every file is referenced by exactly one record and every reference has its
file, no acknowledged attach is lost and no acknowledged detach comes back, reads never saw a
lost or stale record, and nothing answered 5xx. Exit code 1 if an invariant fails.

The workload, the ledger and the checks live here; `tests/test_concurrency.py` runs the same
workload, shorter, against the in-process test server.
"""
import argparse
import asyncio
import hashlib
import importlib.util
import itertools
import json
import os
import random
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tornado.simple_httpclient import SimpleAsyncHTTPClient

from bench.procs import Workspace, in_workspace
from storage import Database, Filter
from tests.images import GIF, multipart, png

PREFIX = "/api/restify"
DOORS = ("rest", "graphql", "mcp")
MCP_TOOLS = ("posts-store-tool", "posts-update-tool", "posts-delete-tool", "posts-index-tool",
             "posts-show-tool", "tags-store-tool", "posts-attach-tool", "posts-detach-tool")
MCP_PRESENT = importlib.util.find_spec("service.mcp") is not None
ISO = "%Y-%m-%dT%H:%M:%S"

_GRAPHQL_STATUS = {"BAD_REQUEST": 400, "UNAUTHENTICATED": 401, "FORBIDDEN": 403, "NOT_FOUND": 404,
                   "PRECONDITION_FAILED": 412, "VALIDATION_FAILED": 422, "TOO_MANY_REQUESTS": 429,
                   "SERVICE_UNAVAILABLE": 503, "INTERNAL": 500}
_MCP_STATUS = {"Not found.": 404, "This action is unauthorized.": 403, "Unauthenticated.": 401,
               "The given data was invalid.": 422, "Server error.": 500, "The database is unavailable.": 503,
               "The record was changed since you read it.": 412}


# -- three front doors over one HTTP client --------------------------------------------------------------
@dataclass
class Answer:
    door: str
    status: int        # HTTP status; for GraphQL and MCP the status their error stands for
    ok: bool           # acknowledged
    body: Any          # REST: the JSON body; GraphQL: `data`; MCP: the tool's JSON (structuredContent)
    errors: dict[str, list[str]] = field(default_factory=dict)   # field errors of a 422
    reason: str = ""

    @property
    def server_error(self) -> bool:
        return self.status >= 500


class Doors:
    """REST, GraphQL (`/graphql`) and MCP (`/mcp`, plain JSON-RPC, stateless) with bearer tokens."""

    def __init__(self, base_url: str, concurrency: int, timeout: float = 60.0) -> None:
        self.base = base_url.rstrip("/")
        self.http = SimpleAsyncHTTPClient(force_instance=True, max_clients=max(10, concurrency),
                                          defaults={"request_timeout": timeout, "connect_timeout": timeout})
        self._ids = itertools.count(1)

    def close(self) -> None:
        self.http.close()

    async def fetch(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, bytes]:
        if body is None and method in ("POST", "PUT", "PATCH"):
            body = b""
        try:
            response = await self.http.fetch(self.base + path, method=method, body=body, headers=headers,
                                             raise_error=False, allow_nonstandard_methods=True)
        except Exception as error:  # no answer at all counts as a server failure
            return 599, repr(error).encode()
        return response.code, response.body or b""

    @staticmethod
    def _auth(token: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"} if token else {}

    async def rest(self, method: str, path: str, token: str | None = None, json_body: Any = None,
                   body: bytes | None = None, headers: dict[str, str] | None = None) -> Answer:
        sent = {**self._auth(token), **(headers or {})}
        if json_body is not None:
            body = json.dumps(json_body).encode()
            sent["Content-Type"] = "application/json"
        status, raw = await self.fetch(method, path, body, sent)
        parsed = _json(raw)
        ok = status in (200, 201, 204)
        errors = (parsed.get("errors") or {}) if isinstance(parsed, dict) and status == 422 else {}
        text = raw[:200].decode("utf-8", "replace")
        reason = "" if ok else (parsed.get("message", "") if isinstance(parsed, dict) else text)
        return Answer("rest", status, ok, parsed, errors, reason)

    async def graphql(self, query: str, variables: dict[str, Any], token: str | None = None) -> Answer:
        payload = json.dumps({"query": query, "variables": variables}).encode()
        status, raw = await self.fetch("POST", "/graphql", payload,
                                        {**self._auth(token), "Content-Type": "application/json"})
        parsed = _json(raw)
        if status != 200 or not isinstance(parsed, dict):
            return Answer("graphql", status if status != 200 else 500, False, parsed, reason=str(parsed)[:200])
        errors = parsed.get("errors") or []
        if not errors and parsed.get("data") is not None:
            return Answer("graphql", 200, True, parsed["data"])
        first = errors[0] if errors else {"message": "no data", "extensions": {"code": "INTERNAL"}}
        extensions = first.get("extensions") or {}
        code = extensions.get("code", "")
        return Answer("graphql", _GRAPHQL_STATUS.get(code, 400), False, parsed.get("data"),
                      extensions.get("errors") or {}, f"{code}: {first.get('message', '')}")

    async def mcp(self, tool: str, arguments: dict[str, Any], token: str) -> Answer:
        answer = await self._mcp_call(tool, arguments, token)
        # A destructive tool previews first (`mcp.confirm_destructive`) and runs with the preview's token;
        # a record changed between the two answers a fresh preview, confirmed in turn.
        for confirmations in range(6):
            if not (answer.ok and isinstance(answer.body, dict) and "preview" in answer.body):
                return answer  # the last confirmation's answer too: it may have deleted
            if confirmations < 5:
                answer = await self._mcp_call(tool, {**arguments, "confirm": answer.body["confirm"]}, token)
        return Answer("mcp", 409, False, answer.body, reason=str(answer.body.get("message"))[:200])  # nothing deleted

    async def _mcp_call(self, tool: str, arguments: dict[str, Any], token: str) -> Answer:
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}
        status, raw = await self.fetch("POST", "/mcp", json.dumps(message).encode(), {
            **self._auth(token), "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        parsed = _json(raw)
        if status != 200 or not isinstance(parsed, dict) or "result" not in parsed:
            # A transport refusal or a JSON-RPC error: the requests here are valid, so the server failed.
            return Answer("mcp", status if status >= 500 else 500, False, parsed, reason=str(parsed)[:200])
        result = parsed["result"]
        content = result.get("structuredContent")
        if content is None:
            texts = [c.get("text", "") for c in result.get("content", []) if c.get("type") == "text"]
            content = _json(texts[0].encode()) if texts else None
        if not result.get("isError"):
            return Answer("mcp", 200, True, content)
        message_text = content.get("message", "") if isinstance(content, dict) else str(content)
        errors = (content.get("errors") or {}) if isinstance(content, dict) else {}
        return Answer("mcp", _MCP_STATUS.get(message_text, 400), False, content, errors, message_text)

    async def mcp_tools(self, token: str) -> set[str]:
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": "tools/list"}
        status, raw = await self.fetch("POST", "/mcp", json.dumps(message).encode(), {
            **self._auth(token), "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        parsed = _json(raw)
        if status != 200 or not isinstance(parsed, dict) or "result" not in parsed:
            return set()
        return {tool["name"] for tool in parsed["result"].get("tools", [])}


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


LONG_FIELDS = {"views"}  # GraphQL `Long` fields, which it writes as strings of digits


def _record(answer: Answer, graphql_field: str = "") -> dict[str, Any]:
    """The record an acknowledged answer carries, flattened to {"id", **attributes}."""
    if answer.door == "graphql":
        record = dict(answer.body.get(graphql_field) or {})
        return {k: int(v) if k in LONG_FIELDS and isinstance(v, str) else v for k, v in record.items()}
    data = answer.body.get("data", answer.body) if isinstance(answer.body, dict) else {}
    return {"id": data.get("id"), **(data.get("attributes") or {})}


# -- the ledger: what the clients saw ------------------------------------------------------------------
@dataclass
class Write:
    t0: float
    t1: float
    values: dict[str, Any]
    acked: bool
    failed: bool        # refused with a 4xx: it must never be visible (but see `check`, reads)
    status: int = 0


@dataclass
class Tracked:
    """A post or a user as the clients know it: its writes (the create first) and delete attempts."""
    id: str
    owner: str
    writes: list[Write] = field(default_factory=list)
    deletes: list[Write] = field(default_factory=list)


@dataclass
class Read:
    post_id: str
    t0: float
    t1: float
    found: bool
    title: str | None
    door: str


@dataclass
class Account:
    id: str
    token: str
    email: str
    name: str
    posts: list[str] = field(default_factory=list)   # own posts, not hot
    hot: list[str] = field(default_factory=list)     # own posts that every worker of this user updates


class Ledger:
    def __init__(self) -> None:
        self.ops: Counter[tuple[str, str, str]] = Counter()   # (kind, door, acked|refused|5xx)
        self.server_errors: list[str] = []
        self.unexpected: list[str] = []
        self.violations: list[str] = []
        self.echoes: list[str] = []    # updates acknowledged with values they did not write
        self.posts: dict[str, Tracked] = {}
        self.users: dict[str, Tracked] = {}
        self.titles: dict[str, tuple[str, Write]] = {}       # every title sent -> (post id, write)
        self.failed_values: set[str] = set()                 # titles and names of refused writes
        self.tags: dict[str, list[str]] = defaultdict(list)  # name -> ids acknowledged
        self.tag_refusals: Counter[str] = Counter()
        self.tag_bulks: list[tuple[list[str], bool]] = []   # (names sent in one bulk store, acknowledged)
        self.emails: dict[str, list[str]] = defaultdict(list)
        self.email_refusals: Counter[str] = Counter()
        self.bursts: list[tuple[str, str, int, int]] = []   # (what, key, acknowledged, sent)
        self.reads: list[Read] = []
        self.uploads: dict[str, set[str]] = defaultdict(set)  # record id -> digests of its acknowledged uploads
        self.urls: dict[str, None] = {}                      # file URLs the answers named, in order
        self.sent_digests: set[str] = set()                  # every valid image sent
        # post id -> tag id -> acknowledged: every attach sent (each tag once per post) and every detach sent
        self.attaches: dict[str, dict[str, bool]] = defaultdict(dict)
        self.detaches: dict[str, dict[str, bool]] = defaultdict(dict)

    def note(self, kind: str, answer: Answer, expected: Iterable[int] = ()) -> Answer:
        outcome = "acked" if answer.ok else ("5xx" if answer.server_error else "refused")
        self.ops[(kind, answer.door, outcome)] += 1
        if answer.server_error:
            self.server_errors.append(f"{kind} via {answer.door}: {answer.status} {answer.reason}")
        elif not answer.ok and answer.status not in tuple(expected):
            self.unexpected.append(f"{kind} via {answer.door}: {answer.status} {answer.reason} {answer.errors}")
        return answer

    def written(self, tracked: Tracked, t0: float, t1: float, values: dict[str, Any], answer: Answer) -> Write:
        write = Write(t0, t1, values, answer.ok, not answer.ok and not answer.server_error, answer.status)
        tracked.writes.append(write)
        if write.failed:
            self.failed_values.update(v for k, v in values.items() if k in ("title", "name") and v)
        return write


# -- the workload -----------------------------------------------------------------------------------------
@dataclass
class Mix:
    """Weights of the operations a worker picks from; 0 leaves one out."""
    create: int = 12
    update_hot: int = 12
    update_own: int = 8
    foreign_update: int = 2
    delete: int = 6
    update_races_delete: int = 3
    read: int = 16
    tag: int = 5
    tag_burst: int = 2
    attach: int = 4               # tags attached to a hot post, which other workers update meanwhile
    detach: int = 2               # an attached tag detached again
    tag_bulk: int = 2
    register_burst: int = 1
    cover: int = 5
    cover_race: int = 2
    bad_upload: int = 2
    avatar: int = 3
    avatar_race: int = 2
    cover_races: bool = True      # off: cover uploads to one post wait for each other (a client-side lock per post)
    avatar_races: bool = True     # off: avatar uploads of one user wait for each other
    read_files: bool = True       # off: reads never GET a stored file (which may be being replaced)
    delete_races_upload: bool = True  # off: a delete of a post waits for the cover uploads to it (and they for it)

    def choices(self) -> tuple[list[str], list[int]]:
        pairs = [(k, v) for k, v in vars(self).items() if isinstance(v, int) and not isinstance(v, bool) and v > 0]
        return [k for k, _ in pairs], [v for _, v in pairs]


POST_FIELDS = "id title body views published user_id cover created_at updated_at"
Q_CREATE_POST = f"mutation($input: PostInput!) {{ createPost(input: $input) {{ {POST_FIELDS} }} }}"
Q_UPDATE_POST = f"mutation($id: ID!, $input: PostInput!) {{ updatePost(id: $id, input: $input) {{ {POST_FIELDS} }} }}"
Q_DELETE_POST = "mutation($id: ID!) { deletePost(id: $id) }"
Q_POST = "query($id: ID!) { post(id: $id) { id title views published user_id } }"
Q_POST_LIST = ("query($first: Int, $page: Int) { postList(first: $first, page: $page) "
               "{ id title views published user_id } }")
Q_CREATE_TAG = "mutation($input: TagInput!) { createTag(input: $input) { id name } }"
Q_CHANGE_TAGS = ("mutation($id: ID!, $ids: [ID!]!) {{ {field}(id: $id, ids: $ids) "
                 "{{ id tags(first: 100) {{ id }} }} }}")
TAG_POOL = 12  # tags to attach: each at most once per post, so a post never holds more than one answer shows
Q_CREATE_TAGS = "mutation($input: [TagInput!]!) { createTagBulk(input: $input) { id name } }"


class Workload:
    def __init__(self, doors: Doors, ledger: Ledger | None = None, mix: Mix | None = None, seed: int | None = None,
                 users: int = 4, hot_posts: int = 2, burst: int = 6) -> None:
        self.doors = doors
        self.ledger = ledger or Ledger()
        self.mix = mix or Mix()
        self.seed = seed if seed is not None else random.randrange(1 << 30)
        self.rng = random.Random(self.seed)
        self.users = users
        self.hot_posts = hot_posts
        self.burst = burst
        self.run_id = f"{self.seed:x}"
        self._seq = itertools.count(1)
        self.accounts: list[Account] = []
        self.door_choices: tuple[str, ...] = ("rest", "graphql")
        self.mcp_note = "service/mcp is absent: the MCP door was not exercised"
        self._names, self._weights = self.mix.choices()
        self._locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.tag_pool: list[str] = []

    def unique(self, what: str) -> str:
        return f"{what}-{self.run_id}-{next(self._seq)}"

    # -- set-up ---------------------------------------------------------------------------------------
    async def setup(self) -> None:
        for n in range(self.users):
            account = await self.register_one(f"user{n}", self.unique("user") + "@example.com")
            assert account is not None, "a set-up registration failed; see the ledger"
            self.accounts.append(account)
        if MCP_PRESENT:
            tools = await self.doors.mcp_tools(self.accounts[0].token)
            missing = [t for t in MCP_TOOLS if t not in tools]
            if not missing:
                self.door_choices = DOORS
                self.mcp_note = ""
            else:
                self.mcp_note = f"MCP door left out: tools missing from tools/list: {', '.join(missing)}"
        doors = itertools.cycle(self.door_choices)
        for account in self.accounts:
            for _ in range(self.hot_posts):
                post_id = await self.create_post(account, next(doors))
                assert post_id is not None, "a set-up post failed; see the ledger"
                account.posts.remove(post_id)  # hot posts are updated by every worker, never deleted
                account.hot.append(post_id)
        for n in range(TAG_POOL):
            answer = await self.create_tag(self.accounts[0], f"attach-{self.run_id}-{n}", "rest")
            assert answer.ok, "a set-up tag failed; see the ledger"
            self.tag_pool.append(_record(answer)["id"])

    async def register_one(self, name: str, email: str) -> Account | None:
        password = "secret-pass"
        values = {"name": name, "avatar": None}
        t0 = time.monotonic()
        answer = self.ledger.note("register", await self.doors.rest("POST", "/api/register", json_body={
            "name": name, "email": email, "password": password, "password_confirmation": password}), (422,))
        t1 = time.monotonic()
        if not answer.ok:
            if answer.status == 422:
                self.ledger.email_refusals[email] += 1
                if set(answer.errors) != {"email"}:
                    self.ledger.unexpected.append(f"register refused for {answer.errors}, not the email")
            return None
        user_id = answer.body["id"]
        self.ledger.emails[email].append(user_id)
        tracked = self.ledger.users[user_id] = Tracked(user_id, user_id)
        self.ledger.written(tracked, t0, t1, values, answer)
        return Account(user_id, answer.body["meta"]["token"], email, name)

    # -- posts ----------------------------------------------------------------------------------------------
    def post_values(self, partial: bool) -> dict[str, Any]:
        values = {"title": self.unique("title"), "body": self.rng.choice([None, "Some text.", "Other text."]),
                  "views": self.rng.randint(0, 1000), "published": self.rng.random() < 0.5}
        if partial:
            keys = [k for k in values if self.rng.random() < 0.5] or ["title"]
            values = {k: values[k] for k in keys}
        return values

    def _echo(self, what: str, sent: dict[str, Any], got: dict[str, Any], into: list[str] | None = None) -> None:
        wrong = {k: (v, got.get(k)) for k, v in sent.items() if got.get(k) != v}
        if wrong:
            (self.ledger.violations if into is None else into).append(
                f"{what} acknowledged other values than sent (sent, got): {wrong}")

    async def create_post(self, account: Account, door: str) -> str | None:
        values = self.post_values(partial=False)
        t0 = time.monotonic()
        if door == "rest":
            answer = await self.doors.rest("POST", f"{PREFIX}/posts", account.token, values)
        elif door == "graphql":
            answer = await self.doors.graphql(Q_CREATE_POST, {"input": values}, account.token)
        else:
            answer = await self.doors.mcp("posts-store-tool", values, account.token)
        t1 = time.monotonic()
        self.ledger.note("post.store", answer)
        if not answer.ok:
            if not answer.server_error:
                self.ledger.failed_values.add(values["title"])
            return None
        record = _record(answer, "createPost")
        self._echo(f"post.store via {door}", {**values, "user_id": account.id, "cover": None}, record)
        tracked = self.ledger.posts[record["id"]] = Tracked(record["id"], account.id)
        write = self.ledger.written(tracked, t0, t1, {**values, "cover": None}, answer)
        self.ledger.titles[values["title"]] = (record["id"], write)
        account.posts.append(record["id"])
        return record["id"]

    async def update_post(self, account: Account, post_id: str, door: str, expected: tuple[int, ...] = (404,),
                          kind: str = "post.update") -> Answer:
        style = self.rng.choice(["put", "patch"]) if door == "rest" else "partial"
        values = self.post_values(partial=style != "put")
        t0 = time.monotonic()
        if door == "rest":
            answer = await self.doors.rest("PUT" if style == "put" else "PATCH", f"{PREFIX}/posts/{post_id}",
                                           account.token, values)
        elif door == "graphql":
            answer = await self.doors.graphql(Q_UPDATE_POST, {"id": post_id, "input": values}, account.token)
        else:
            answer = await self.doors.mcp("posts-update-tool", {"id": post_id, **values}, account.token)
        t1 = time.monotonic()
        self.ledger.note(f"{kind}.{style}" if door == "rest" else kind, answer, expected)
        tracked = self.ledger.posts.get(post_id)
        if tracked is not None:
            write = self.ledger.written(tracked, t0, t1, values, answer)
            if "title" in values:
                self.ledger.titles[values["title"]] = (post_id, write)
        if answer.ok:
            self._echo(f"{kind} via {door}", values, _record(answer, "updatePost"), self.ledger.echoes)
        return answer

    async def delete_post(self, account: Account, post_id: str, door: str) -> Answer:
        t0 = time.monotonic()
        if door == "rest":
            answer = await self.doors.rest("DELETE", f"{PREFIX}/posts/{post_id}", account.token)
        elif door == "graphql":
            answer = await self.doors.graphql(Q_DELETE_POST, {"id": post_id}, account.token)
            if answer.ok and answer.body.get("deletePost") is not True:
                self.ledger.violations.append(f"deletePost answered {answer.body!r}")
        else:
            answer = await self.doors.mcp("posts-delete-tool", {"id": post_id}, account.token)
        t1 = time.monotonic()
        # Over MCP, 409: changed after each preview; 412: changed between the confirmation and the delete,
        # which runs at the previewed version. Nothing is deleted either way.
        self.ledger.note("post.delete", answer, (404, 409, 412))
        tracked = self.ledger.posts.get(post_id)
        if tracked is not None:
            refused = not answer.ok and not answer.server_error
            tracked.deletes.append(Write(t0, t1, {}, answer.ok, refused, answer.status))
        if answer.ok and post_id in account.posts:
            account.posts.remove(post_id)
        return answer

    # -- reads ----------------------------------------------------------------------------------------------
    def _seen(self, post_id: str, t0: float, t1: float, found: bool, title: str | None, door: str) -> None:
        self.ledger.reads.append(Read(post_id, t0, t1, found, title, door))

    async def read(self, account: Account) -> None:
        token = account.token if self.rng.random() < 0.7 else None   # guests read posts too
        choice = self.rng.choice(["show", "index"] + (["file"] if self.mix.read_files else [])
                                 + (["gql_show", "gql_list"]
                                 if "graphql" in self.door_choices else [])
                                 + (["mcp_show", "mcp_index"] if "mcp" in self.door_choices else []))
        post_id = self.rng.choice(list(self.ledger.posts)) if self.ledger.posts else "0" * 24
        t0 = time.monotonic()
        if choice in ("show", "mcp_show"):
            if choice == "show":
                answer = await self.doors.rest("GET", f"{PREFIX}/posts/{post_id}", token)
            else:
                answer = await self.doors.mcp("posts-show-tool", {"id": post_id}, account.token)
            self.ledger.note("read.show", answer, (404,))
            if answer.status in (200, 404):
                title = _record(answer).get("title") if answer.ok else None
                self._seen(post_id, t0, time.monotonic(), answer.ok, title, answer.door)
        elif choice == "gql_show":
            answer = self.ledger.note("read.show", await self.doors.graphql(Q_POST, {"id": post_id}, token), (404,))
            found = answer.ok and answer.body.get("post") is not None
            if answer.ok or answer.status == 404:
                self._seen(post_id, t0, time.monotonic(), found, answer.body["post"]["title"] if found else None,
                           "graphql")
        elif choice == "file":
            urls = sorted(self.ledger.urls)
            if not urls:
                return
            url = self.rng.choice(urls)
            status, raw = await self.doors.fetch("GET", url, None, {})
            answer = Answer("rest", status, status == 200, None, reason=raw[:100].decode("utf-8", "replace"))
            self.ledger.note("read.file", answer, (404,))
            if answer.ok and hashlib.sha256(raw).hexdigest() not in self.ledger.sent_digests:
                self.ledger.violations.append(f"GET {url} served bytes no client ever uploaded ({len(raw)} bytes)")
        else:
            page = self.rng.randint(1, 3)
            if choice == "index":
                answer = await self.doors.rest("GET", f"{PREFIX}/posts?perPage=10&page={page}", token)
                items = [_flat(item) for item in answer.body["data"]] if answer.ok else []
            elif choice == "gql_list":
                answer = await self.doors.graphql(Q_POST_LIST, {"first": 10, "page": page}, token)
                items = answer.body["postList"] if answer.ok else []
            else:
                answer = await self.doors.mcp("posts-index-tool", {"perPage": 10, "page": page}, account.token)
                items = [_flat(item) for item in answer.body["data"]] if answer.ok else []
            self.ledger.note("read.index", answer)
            t1 = time.monotonic()
            for item in items:
                self._seen(item["id"], t0, t1, True, item.get("title"), answer.door)

    # -- tags and registrations: unique rules -------------------------------------------------------------
    async def create_tag(self, account: Account, name: str, door: str) -> Answer:
        if door == "rest":
            answer = await self.doors.rest("POST", f"{PREFIX}/tags", account.token, {"name": name})
        elif door == "graphql":
            answer = await self.doors.graphql(Q_CREATE_TAG, {"input": {"name": name}}, account.token)
        else:
            answer = await self.doors.mcp("tags-store-tool", {"name": name}, account.token)
        self.ledger.note("tag.store", answer, (422,))
        if answer.ok:
            record = _record(answer, "createTag")
            self._echo(f"tag.store via {door}", {"name": name}, record)
            self.ledger.tags[name].append(record["id"])
        elif answer.status == 422:
            self.ledger.tag_refusals[name] += 1
            if answer.errors.get("name") != ["The name has already been taken."]:
                self.ledger.unexpected.append(f"tag.store refused with {answer.errors}, not the unique rule")
        return answer

    async def create_tags(self, account: Account, names: list[str], door: str) -> Answer:
        """A bulk store (REST or GraphQL): all its tags are written or none, whatever else races it.
        A repeated or taken name refuses the whole request (the repeat is refused by the unique index
        after the items before it were written, which are then taken back)."""
        items = [{"name": name} for name in names]
        if door == "graphql":
            answer = await self.doors.graphql(Q_CREATE_TAGS, {"input": items}, account.token)
        else:
            answer = await self.doors.rest("POST", f"{PREFIX}/tags/bulk", account.token, items)
        self.ledger.note("tag.bulk", answer, (422,))
        self.ledger.tag_bulks.append((names, answer.ok))
        if answer.ok:
            records = answer.body.get("createTagBulk") if door == "graphql" else \
                [{"id": d["id"], **d["attributes"]} for d in answer.body["data"]]
            if [r.get("name") for r in records] != names:
                self.ledger.violations.append(f"tag.bulk via {door} answered {records}, sent {names}")
            for record in records:
                self.ledger.tags[record["name"]].append(record["id"])
        elif answer.status == 422 and any(v != ["The name has already been taken."] or not k.endswith(".name")
                                          for k, v in answer.errors.items()):
            self.ledger.unexpected.append(f"tag.bulk refused with {answer.errors}, not the unique rule")
        return answer

    async def tag_burst(self, account: Account) -> None:
        name = self.unique("tag")
        doors = [self.door_choices[i % len(self.door_choices)] for i in range(self.burst)]
        answers = await asyncio.gather(*(self.create_tag(account, name, door) for door in doors))
        self.ledger.bursts.append(("tag", name, sum(a.ok for a in answers), len(answers)))

    # -- attach and detach: the tags of posts every worker of their user updates ----------------------------
    async def change_tags(self, account: Account, operation: str) -> None:
        post_id = self.rng.choice(account.hot)
        sent, detached = self.ledger.attaches[post_id], self.ledger.detaches[post_id]
        if operation == "attach":
            choices = [t for t in self.tag_pool if t not in sent]
            ids = self.rng.sample(choices, min(len(choices), self.rng.randint(1, 2)))
        else:
            ids = [t for t, acked in sent.items() if acked and t not in detached][:1]
        if not ids:
            return
        marks = sent if operation == "attach" else detached
        marks.update((t, False) for t in ids)  # sent: no other worker picks them again
        door = self.door()
        if door == "rest":
            answer = await self.doors.rest("POST", f"{PREFIX}/posts/{post_id}/{operation}/tags?relatablePerPage=100",
                                           account.token, {"tags": ids})
        elif door == "graphql":
            answer = await self.doors.graphql(Q_CHANGE_TAGS.format(field=f"{operation}PostTags"),
                                              {"id": post_id, "ids": ids}, account.token)
        else:
            answer = await self.doors.mcp(f"posts-{operation}-tool", {"id": post_id, "relation": "tags", "ids": ids},
                                          account.token)
        # Over MCP a detach previews first: 409 changed after each preview, 412 between confirmation and write.
        self.ledger.note(f"tags.{operation}", answer, (409, 412) if operation == "detach" else ())
        if not answer.ok:
            return
        marks.update((t, True) for t in ids)
        body = answer.body.get(f"{operation}PostTags") if door == "graphql" else answer.body.get("data")
        shown = {t["id"] for t in ((body or {}).get("tags") if door == "graphql"
                                   else (body or {}).get("relationships", {}).get("tags")) or []}
        wrong = set(ids) - shown if operation == "attach" else set(ids) & shown
        if wrong:
            self.ledger.violations.append(f"tags.{operation} via {door} of {ids} answered tags {sorted(shown)}")

    async def register_burst(self) -> None:
        email = self.unique("same") + "@example.com"
        answers = await asyncio.gather(*(self.register_one(f"racer{i}", email) for i in range(self.burst)))
        self.ledger.bursts.append(("register", email, sum(a is not None for a in answers), len(answers)))

    # -- files -----------------------------------------------------------------------------------------
    def image(self, bad: bool = False, kind: str | None = None) -> tuple[str, bytes, str]:
        if bad:
            return "fake.png", b"not an image " + self.unique("bytes").encode(), "image/png"
        if kind == "gif" or kind is None and self.rng.random() < 0.3:
            data = GIF + self.unique("gif").encode()   # bytes after the trailer: still a GIF, and unique
            self.ledger.sent_digests.add(hashlib.sha256(data).hexdigest())
            return "pic.gif", data, "image/gif"
        data = png(self.rng.randint(1, 4), self.rng.randint(1, 4), padding=self.rng.randint(1, 64))
        data += self.unique("png").encode()  # after IEND: still a PNG, and unique
        self.ledger.sent_digests.add(hashlib.sha256(data).hexdigest())
        return "pic.png", data, "image/png"

    async def upload_cover(self, account: Account, post_id: str, bad: bool = False, kind: str | None = None) -> Answer:
        title = self.unique("title")
        filename, data, content_type = self.image(bad, kind)
        body, headers = multipart({"title": title}, {"cover": (filename, data, content_type)})
        t0 = time.monotonic()
        answer = await self.doors.rest("POST", f"{PREFIX}/posts/{post_id}", account.token, body=body, headers=headers)
        t1 = time.monotonic()
        self.ledger.note("upload.cover.bad" if bad else "upload.cover", answer, (422, 404) if bad else (404,))
        if bad and answer.ok:
            self.ledger.violations.append(f"a cover of non-image bytes was acknowledged: {answer.body}")
        if bad and answer.status == 422 and set(answer.errors) != {"cover"}:
            self.ledger.unexpected.append(f"bad cover refused for {answer.errors}")
        url = _record(answer).get("cover") if answer.ok else None
        tracked = self.ledger.posts.get(post_id)
        if tracked is not None:
            write = self.ledger.written(tracked, t0, t1, {"title": title, "cover": url}, answer)
            self.ledger.titles[title] = (post_id, write)
        if answer.ok:
            # The demo stores covers as covers/post-{id}-{rev}.{ext}: its own id and the extension it sent.
            suffix = "." + filename.rsplit(".", 1)[1]
            if not (isinstance(url, str) and url.startswith("/storage/covers/post-") and post_id in url
                    and url.endswith(suffix)):
                self.ledger.echoes.append(f"a {suffix} cover upload to {post_id} acknowledged with cover {url!r}")
            self.ledger.uploads[post_id].add(hashlib.sha256(data).hexdigest())
            self.ledger.urls[url] = None
        return answer

    async def upload_avatar(self, account: Account, bad: bool = False, kind: str | None = None) -> Answer:
        name = self.unique("name")
        filename, data, content_type = self.image(bad, kind)
        body, headers = multipart({"name": name, "email": account.email}, {"avatar": (filename, data, content_type)})
        t0 = time.monotonic()
        answer = await self.doors.rest("POST", f"{PREFIX}/profile", account.token, body=body, headers=headers)
        t1 = time.monotonic()
        self.ledger.note("upload.avatar.bad" if bad else "upload.avatar", answer, (422,) if bad else ())
        if bad and answer.ok:
            self.ledger.violations.append(f"an avatar of non-image bytes was acknowledged: {answer.body}")
        attributes = answer.body.get("attributes", {}) if answer.ok else {}
        url = attributes.get("avatar")
        # The URL is chosen by the server, so the answer is the only source: a wrong one shows in the echo check.
        self.ledger.written(self.ledger.users[account.id], t0, t1, {"name": name, "avatar": url}, answer)
        if answer.ok:
            self._echo("upload.avatar", {"name": name}, attributes, self.ledger.echoes)
            suffix = "." + filename.rsplit(".", 1)[1]
            if not (isinstance(url, str) and url.startswith("/storage/avatars/") and url.endswith(suffix)):
                self.ledger.echoes.append(f"avatar upload of a {suffix} acknowledged with avatar {url!r}")
            self.ledger.uploads[account.id].add(hashlib.sha256(data).hexdigest())
            self.ledger.urls[url] = None
        return answer

    # -- one worker ------------------------------------------------------------------------------------------
    def door(self) -> str:
        return self.rng.choice(self.door_choices)

    def _cover(self, account: Account, post_id: str, bad: bool = False) -> Awaitable[Answer]:
        races = self.mix.cover_races and self.mix.delete_races_upload
        return self._one_at_a_time(post_id, self.upload_cover(account, post_id, bad=bad), races)

    def _delete(self, account: Account, post_id: str) -> Awaitable[Answer]:
        return self._one_at_a_time(post_id, self.delete_post(account, post_id, self.door()),
                                   self.mix.delete_races_upload)

    async def _one_at_a_time(self, key: str, upload: Awaitable[Answer], races: bool) -> Answer:
        if races:
            return await upload
        async with self._locks[key]:
            return await upload

    async def step(self, account: Account, name: str | None = None) -> None:
        name = name or self.rng.choices(self._names, self._weights)[0]
        own = self.rng.choice(account.posts) if account.posts else None
        if name == "create" or (own is None and name in ("update_own", "delete", "update_races_delete")):
            await self.create_post(account, self.door())
        elif name == "update_hot":
            await self.update_post(account, self.rng.choice(account.hot), self.door())
        elif name == "update_own":
            await self.update_post(account, own, self.door())
        elif name == "foreign_update":
            others = [a for a in self.accounts if a is not account]
            target = self.rng.choice(self.rng.choice(others).hot) if others else None
            if target is not None:
                answer = await self.update_post(account, target, self.door(), expected=(403, 404),
                                                kind="post.foreign-update")
                if answer.ok:
                    self.ledger.violations.append(f"a foreign update of post {target} was acknowledged")
        elif name == "delete":
            await self._delete(account, own)
        elif name == "update_races_delete":
            await asyncio.gather(self.update_post(account, own, self.door()), self._delete(account, own))
        elif name == "read":
            await self.read(account)
        elif name == "tag":
            await self.create_tag(account, f"pool-{self.run_id}-{self.rng.randint(1, 12)}", self.door())
        elif name == "tag_burst":
            await self.tag_burst(account)
        elif name == "tag_bulk":
            # Half: three fresh names, which should all be written. Half: two fresh names and one of a small
            # pool, soon taken: refused, and the fresh ones written before the conflict must be taken back.
            names = [self.unique("bulk"), self.unique("bulk")]
            names.append(self.unique("bulk") if self.rng.random() < 0.5 else
                          f"bulk-pool-{self.run_id}-{self.rng.randint(1, 8)}")
            self.rng.shuffle(names)
            await self.create_tags(account, names, self.rng.choice(("rest", "graphql")))
        elif name == "register_burst":
            await self.register_burst()
        elif name in ("attach", "detach"):
            await self.change_tags(account, name)
        elif name == "cover":
            await self._cover(account, self.rng.choice(account.hot + account.posts[-3:]))
        elif name == "cover_race":
            target = self.rng.choice(account.hot)
            await asyncio.gather(*(self.upload_cover(account, target) for _ in range(3)))
        elif name == "bad_upload":
            if self.rng.random() < 0.5:
                await self._cover(account, self.rng.choice(account.hot + account.posts[-3:]), bad=True)
            else:
                await self._one_at_a_time(account.id, self.upload_avatar(account, bad=True), self.mix.avatar_races)
        elif name == "avatar":
            await self._one_at_a_time(account.id, self.upload_avatar(account), self.mix.avatar_races)
        elif name == "avatar_race":
            await asyncio.gather(*(self.upload_avatar(account) for _ in range(3)))

    async def worker(self, index: int, steps: int | None, deadline: float | None) -> None:
        account = self.accounts[index % len(self.accounts)]
        done = 0
        while (steps is None or done < steps) and (deadline is None or time.monotonic() < deadline):
            # The first steps go round every operation, so a short run still has each of them at once.
            forced = self._names[index % len(self._names)] if done == 0 else None
            await self.step(account, forced)
            done += 1

    async def run(self, workers: int, steps: int | None = None, seconds: float | None = None) -> None:
        deadline = time.monotonic() + seconds if seconds is not None else None
        await asyncio.gather(*(self.worker(i, steps, deadline) for i in range(workers)))


def _flat(item: dict[str, Any]) -> dict[str, Any]:
    return {"id": item["id"], **item.get("attributes", {})}


# -- invariants ------------------------------------------------------------------------------------------
@dataclass
class Invariant:
    key: str
    name: str
    problems: list[str]
    checked: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class Stored:
    """What the database and the disk hold after the run."""
    posts: dict[str, dict[str, Any]]
    users: dict[str, dict[str, Any]]
    tags: list[dict[str, Any]]
    tokens: list[dict[str, Any]]
    files: list[str]                   # paths on the disk in use
    other_disk: list[str]              # paths on the disk not in use (must be none)
    orphan_chunks: set[str]            # GridFS chunks whose file document is gone
    disk: str
    files_root: Path

    @classmethod
    async def load(cls, db: Database, files_root: Path, disk: str) -> "Stored":
        grid_files = await _all(db, "files.files")
        grid = [d.get("filename") for d in grid_files]
        chunk_owners = {str(d.get("files_id")) for d in await _all(db, "files.chunks")}
        local = sorted(str(p.relative_to(files_root)) for p in files_root.rglob("*")
                       if p.is_file()) if files_root.exists() else []
        return cls({d["id"]: d for d in await _all(db, "posts")}, {d["id"]: d for d in await _all(db, "users")},
                   await _all(db, "tags"), await _all(db, "personal_access_tokens"),
                   local if disk == "local" else grid, grid if disk == "local" else local,
                   chunk_owners - {d["id"] for d in grid_files}, disk, files_root)


async def _all(db: Database, name: str) -> list[dict[str, Any]]:
    return await db.collection(name).find(Filter())


def allowed(writes: list[Write], name: str) -> list[Any]:
    """Values `name` may hold now: from acknowledged writes (or writes answered 5xx, whose outcome is
    unknown; the 5xx itself fails another invariant) that no acknowledged write started after."""
    acked = [w for w in writes if w.acked and name in w.values]
    maybe = [w for w in writes if not w.acked and not w.failed and name in w.values]
    return [w.values[name] for w in acked + maybe if not any(o.t0 > w.t1 for o in acked)]


def _same(stored: Any, wanted: Any) -> bool:
    if isinstance(wanted, bool):
        # The embedded server keeps a `$set` bool as 1/0; the API reads it back as a bool.
        return stored in (wanted, int(wanted)) and type(stored) in (bool, int)
    return stored == wanted and type(stored) is type(wanted)


def _iso(value: Any) -> bool:
    if not isinstance(value, str) or not value.endswith("Z"):
        return False
    try:
        time.strptime(value[:19], ISO)
        return True
    except ValueError:
        return False


def _presence(ledger: Ledger, stored: Stored) -> list[str]:
    problems = []
    for post_id, tracked in ledger.posts.items():
        acked_deletes = [d for d in tracked.deletes if d.acked]
        if len(acked_deletes) > 1:
            problems.append(f"post {post_id}: {len(acked_deletes)} deletes acknowledged")
        if acked_deletes and post_id in stored.posts:
            problems.append(f"post {post_id}: acknowledged deleted, still stored")
        if not acked_deletes and post_id not in stored.posts:
            problems.append(f"post {post_id}: acknowledged created, never acknowledged deleted, missing")
    problems += [f"user {u}: acknowledged registered, missing" for u in ledger.users if u not in stored.users]
    for name, ids in ledger.tags.items():
        found = [t["id"] for t in stored.tags if t.get("name") == name]
        if ids and found != ids[:1]:
            problems.append(f"tag {name!r}: acknowledged {ids}, stored {found}")
    return problems


def _values(ledger: Ledger, stored: Stored) -> list[str]:
    problems = []
    for kind, tracked_by_id, documents, names in (
            ("post", ledger.posts, stored.posts, ("title", "body", "views", "published", "cover")),
            ("user", ledger.users, stored.users, ("name", "avatar"))):
        for record_id, tracked in tracked_by_id.items():
            document = documents.get(record_id)
            if document is None:
                continue
            if kind == "post" and document.get("user_id") != tracked.owner:
                problems.append(f"post {record_id}: user_id {document.get('user_id')!r}, "
                                f"acknowledged {tracked.owner!r}")
            for name in names:
                choices = allowed(tracked.writes, name)
                if not any(_same(document.get(name), value) for value in choices):
                    problems.append(f"{kind} {record_id}: {name}={document.get(name)!r}, acknowledged {choices!r}")
    for document in list(stored.posts.values()) + list(stored.users.values()):
        for name in ("title", "name"):
            if document.get(name) in ledger.failed_values:
                problems.append(f"{document['id']}: {name}={document[name]!r} was written by a refused request")
    return problems


def _counts(ledger: Ledger, stored: Stored) -> list[str]:
    problems = []
    live = [p for p, t in ledger.posts.items() if not any(d.acked for d in t.deletes)]
    if len(stored.posts) != len(live):
        unknown = sorted(set(stored.posts) - set(ledger.posts))[:5]
        problems.append(f"posts: {len(stored.posts)} stored, {len(live)} acknowledged live (unknown ids: {unknown})")
    per_owner = Counter(ledger.posts[p].owner for p in live)
    stored_per_owner = Counter(d.get("user_id") for d in stored.posts.values())
    if per_owner != stored_per_owner:
        problems.append(f"posts per user: stored {dict(stored_per_owner)}, acknowledged {dict(per_owner)}")
    if len(stored.users) != len(ledger.users):
        problems.append(f"users: {len(stored.users)} stored, {len(ledger.users)} acknowledged")
    acked_tags = sum(len(ids) for ids in ledger.tags.values())
    if len(stored.tags) != acked_tags:
        problems.append(f"tags: {len(stored.tags)} stored, {acked_tags} acknowledged")
    if Counter(t.get("user_id") for t in stored.tokens) != Counter(list(ledger.users)):
        problems.append(f"tokens: {len(stored.tokens)} stored, expected one per acknowledged registration "
                        f"({len(ledger.users)})")
    return problems


def _unique(ledger: Ledger, stored: Stored) -> list[str]:
    problems = []
    names = [t.get("name") for t in stored.tags]
    emails = [u.get("email") for u in stored.users.values()]
    for what, values in (("tags.name", names), ("users.email", emails)):
        duplicated = {v: n for v, n in Counter(values).items() if n > 1}
        if duplicated:
            problems.append(f"{what} duplicated: {duplicated}")
    problems += [f"tag {n!r} acknowledged {len(ids)} times" for n, ids in ledger.tags.items() if len(ids) > 1]
    problems += [f"email {e!r} acknowledged {len(ids)} times" for e, ids in ledger.emails.items() if len(ids) > 1]
    problems += [f"tag {n!r} refused as taken, but no such tag is stored" for n in ledger.tag_refusals
                 if n not in names]
    problems += [f"email {e!r} refused as taken, but no such user is stored" for e in ledger.email_refusals
                 if e not in emails]
    problems += [f"{what} burst {key!r}: {acked} of {sent} same-value creates acknowledged, expected exactly 1"
                 for what, key, acked, sent in ledger.bursts if acked != 1]
    return problems


def _partial(stored: Stored) -> list[str]:
    problems = []
    for document in stored.posts.values():
        wrong = [n for n, ok in (
            ("title", isinstance(document.get("title"), str) and bool(document["title"])),
            ("user_id", document.get("user_id") in stored.users),
            ("created_at", _iso(document.get("created_at"))),
            ("updated_at", _iso(document.get("updated_at"))
             and document["updated_at"] >= str(document.get("created_at"))),
            ("views", type(document.get("views")) is int and document["views"] >= 0),
            ("published", type(document.get("published")) is bool or document.get("published") in (0, 1)),
            ("body", document.get("body") is None or isinstance(document["body"], str)),
            ("cover", document.get("cover") is None or isinstance(document["cover"], str)),
            ("tag_ids", isinstance(document.get("tag_ids"), list)),
        ) if not ok]
        if wrong:
            problems.append(f"post {document['id']}: bad {wrong}: { {k: document.get(k) for k in wrong} }")
    for document in stored.users.values():
        wrong = [n for n, ok in (
            ("name", isinstance(document.get("name"), str) and bool(document["name"])),
            ("email", isinstance(document.get("email"), str) and "@" in document["email"]),
            ("password", isinstance(document.get("password"), str) and document["password"].startswith("$argon2")),
            ("created_at", _iso(document.get("created_at"))),
            ("updated_at", _iso(document.get("updated_at"))),
        ) if not ok]
        if wrong:
            problems.append(f"user {document['id']}: bad {wrong}")
    problems += [f"tag {t['id']}: partial {t}" for t in stored.tags
                 if not isinstance(t.get("name"), str) or not _iso(t.get("created_at"))]
    return problems


def _relations(ledger: Ledger, stored: Stored) -> list[str]:
    """Each tag is attached to a post at most once and detached at most once, so: every acknowledged
    attach not followed by a detach is there, no acknowledged detach is, nothing never sent is, no
    tag twice."""
    problems = []
    for post_id, sent in ledger.attaches.items():
        document = stored.posts.get(post_id)
        if document is None:
            continue
        held = document.get("tag_ids") or []
        detached = ledger.detaches[post_id]
        if len(set(held)) != len(held):
            problems.append(f"post {post_id}: a tag twice in {held}")
        problems += [f"post {post_id}: tag {t} stored, never attached" for t in held if t not in sent]
        problems += [f"post {post_id}: acknowledged attach of {t} lost" for t, acked in sent.items()
                     if acked and t not in detached and t not in held]
        problems += [f"post {post_id}: acknowledged detach of {t}, still attached" for t, acked in detached.items()
                     if acked and t in held]
    return problems


def _bulks(ledger: Ledger, stored: Stored) -> list[str]:
    """Every bulk store is whole: an acknowledged one stored each of its tags (see presence), a refused
    one none (every stored tag of its names was acknowledged to someone)."""
    problems = []
    for names, acked in ledger.tag_bulks:
        for name in set(names):
            found = [t["id"] for t in stored.tags if t.get("name") == name]
            if not set(found) <= set(ledger.tags.get(name, [])):
                problems.append(f"bulk {names} ({'acknowledged' if acked else 'refused'}): tag {name!r} stored as "
                                f"{found}, acknowledged {ledger.tags.get(name, [])}")
            elif acked and not found:
                problems.append(f"bulk {names} acknowledged: tag {name!r} missing")
    return problems


def _reads(ledger: Ledger) -> list[str]:
    problems = []
    for read in ledger.reads:
        tracked = ledger.posts.get(read.post_id)
        if tracked is None:
            continue
        what = f"{read.door} read of post {read.post_id}"
        if not read.found:
            if tracked.writes[0].t1 < read.t0 and not any(d.t0 < read.t1 for d in tracked.deletes):
                problems.append(f"{what}: not found, though acknowledged and no delete had started")
            continue
        if any(d.acked and d.t1 < read.t0 for d in tracked.deletes):
            problems.append(f"{what}: found after its delete was acknowledged")
        if read.title is None:
            continue
        origin = ledger.titles.get(read.title)
        if origin is None or origin[0] != read.post_id:
            problems.append(f"{what}: a title never sent to it: {read.title!r}")
            continue
        write = origin[1]
        # An update whose record was deleted between its write and its re-read answers 404 though it was
        # applied for a moment; the record is gone either way, so only other refusals must stay invisible.
        landed_then_deleted = write.status == 404 and any(d.acked for d in tracked.deletes)
        if write.failed and not landed_then_deleted:
            problems.append(f"{what}: the title of a refused write")
        elif write.t0 > read.t1:
            problems.append(f"{what}: a title sent after the read")
        elif any(o.acked and "title" in o.values and o.t0 > write.t1 and o.t1 < read.t0 for o in tracked.writes):
            problems.append(f"{what}: stale title {read.title!r} (a later acknowledged update had finished "
                            "before the read began)")
    return problems


async def _files(ledger: Ledger, stored: Stored, db: Database, url_prefix: str) -> list[str]:
    problems = []
    prefix = url_prefix.rstrip("/") + "/"
    referenced: Counter[str] = Counter()
    owners: dict[str, str] = {}
    for kind, documents, name in (("post", stored.posts, "cover"), ("user", stored.users, "avatar")):
        for document in documents.values():
            url = document.get(name)
            if url is None:
                continue
            if not isinstance(url, str) or not url.startswith(prefix):
                problems.append(f"{kind} {document['id']}: {name} {url!r} is not a stored file URL")
                continue
            referenced[url[len(prefix):]] += 1
            owners[url[len(prefix):]] = document["id"]
    for path, n in Counter(stored.files).items():
        if n > 1:
            problems.append(f"{path}: stored {n} times on {stored.disk}")
        if path not in referenced:
            problems.append(f"{path}: orphaned (no record references it)")
    problems += [f"{path}: on the disk that is not in use" for path in stored.other_disk]
    problems += [f"GridFS chunks of a file that does not exist (files_id {o})" for o in sorted(stored.orphan_chunks)]
    for path, n in referenced.items():
        if n > 1:
            problems.append(f"{path}: referenced by {n} records")
        if path not in stored.files:
            problems.append(f"{path}: referenced, but no such file on {stored.disk}")
            continue
        if stored.disk == "local":
            target = stored.files_root / path
            data = target.read_bytes() if target.is_file() else b""
        else:
            data = await db.gridfs().get(path) or b""
        if hashlib.sha256(data).hexdigest() not in ledger.uploads.get(owners[path], set()):
            problems.append(f"{path}: content is no acknowledged upload to its record ({len(data)} bytes)")
    return problems


async def check(ledger: Ledger, db: Database, files_root: Path, disk: str,
                url_prefix: str = "/storage") -> list[Invariant]:
    """Every invariant, from the ledger and what the database and the disk hold now."""
    stored = await Stored.load(db, files_root, disk)
    outcomes = Counter()
    for (kind, _, outcome), n in ledger.ops.items():
        outcomes[outcome] += n
        if outcome == "acked" and kind.startswith(("post.update", "upload.")):
            outcomes["acked updates"] += n
    return [
        Invariant("5xx", "no 5xx anywhere (no answer at all counts too)", ledger.server_errors,
                  sum(ledger.ops.values())),
        Invariant("refusals", "every refusal was an expected one (404 after a delete, 409/412 an MCP delete or "
                  "detach whose record changed after its preview, 403 foreign, 422 unique or bad image)",
                  ledger.unexpected,
                  outcomes["refused"]),
        Invariant("acks", "acknowledged answers carry what was sent; bad uploads are never acknowledged",
                  ledger.violations, outcomes["acked"]),
        Invariant("echo", "an acknowledged update answers with the values it wrote, not a concurrent request's",
                  ledger.echoes, outcomes["acked updates"]),
        Invariant("presence", "every acknowledged create is stored; no acknowledged delete remains",
                  _presence(ledger, stored), len(ledger.posts) + len(ledger.users) + len(ledger.tags)),
        Invariant("values", "stored values are the last acknowledged ones; refused writes left no trace",
                  _values(ledger, stored), len(stored.posts) + len(stored.users)),
        Invariant("counts", "counts match what the clients saw acknowledged (posts, per user, users, tags, tokens)",
                  _counts(ledger, stored), 5),
        Invariant("unique", "unique rules hold: no duplicate, exactly one winner per same-value burst",
                  _unique(ledger, stored), len(ledger.tags) + len(ledger.emails) + len(ledger.bursts)),
        Invariant("bulk", "every bulk store is whole: all of its tags stored, or none", _bulks(ledger, stored),
                  len(ledger.tag_bulks)),
        Invariant("partial", "no partially written record (every field present with its type)",
                  _partial(stored), len(stored.posts) + len(stored.users) + len(stored.tags)),
        Invariant("relations", "no acknowledged attach is lost, no acknowledged detach remains, each tag once",
                  _relations(ledger, stored), sum(map(sum, (sent.values() for sent in ledger.attaches.values())))),
        Invariant("reads", "reads never missed an acknowledged record, saw a deleted one, a refused write or a "
                  "stale value", _reads(ledger), len(ledger.reads)),
        Invariant("files", "files: each stored file referenced by exactly one record, each reference has its file, "
                  "content is an acknowledged upload", await _files(ledger, stored, db, url_prefix),
                  len(stored.files)),
    ]


# -- report ----------------------------------------------------------------------------------------------
def report(ledger: Ledger, invariants: list[Invariant], seconds: float, out: Callable[[str], Any] = print,
           examples: int = 5) -> None:
    """Operations per kind and door, then each invariant with its first problems."""
    kinds = sorted({(k, d) for k, d, _ in ledger.ops})
    out(f"{'operation':<26}{'door':<9}{'run':>7}{'acked':>7}{'refused':>9}{'5xx':>6}")
    totals = Counter()
    for kind, door in kinds:
        row = {o: ledger.ops[(kind, door, o)] for o in ("acked", "refused", "5xx")}
        run = sum(row.values())
        totals.update(row, run=run)
        out(f"{kind:<26}{door:<9}{run:>7}{row['acked']:>7}{row['refused']:>9}{row['5xx']:>6}")
    out(f"{'total':<35}{totals['run']:>7}{totals['acked']:>7}{totals['refused']:>9}{totals['5xx']:>6}"
        f"   ({totals['run'] / seconds:.0f} operations/s over {seconds:.1f} s)")
    by_door = Counter()
    for (_, door, _), n in ledger.ops.items():
        by_door[door] += n
    out("by door: " + ", ".join(f"{d} {n}" for d, n in sorted(by_door.items())))
    out(f"reads checked {len(ledger.reads)}; posts tracked {len(ledger.posts)}; users {len(ledger.users)}; "
        f"tag names {len(ledger.tags)}; same-value bursts {len(ledger.bursts)}; bulk stores {len(ledger.tag_bulks)} "
        f"({sum(acked for _, acked in ledger.tag_bulks)} acknowledged); files uploaded "
        f"{sum(len(v) for v in ledger.uploads.values())}")
    out("invariants:")
    for invariant in invariants:
        out(f"  [{'PASS' if invariant.ok else 'FAIL'}] {invariant.name} ({invariant.checked} checked"
            + (f", {len(invariant.problems)} problems)" if invariant.problems else ")"))
        for problem in invariant.problems[:examples]:
            out(f"         - {problem}")
        if len(invariant.problems) > examples:
            out(f"         ... {len(invariant.problems) - examples} more")


# -- the command -----------------------------------------------------------------------------------------
async def _soak(uri: str, db_name: str, base_url: str, files_root: Path, args: argparse.Namespace) -> int:
    from storage import connect
    doors = Doors(base_url, concurrency=args.workers * 4)
    database = connect(uri, db_name)
    try:
        workload = Workload(doors, mix=Mix(), seed=args.seed, users=max(2, args.workers // 4))
        await workload.setup()
        print(f"seed {workload.seed}; {args.workers} workers over {workload.users} users; disk {args.disk}; "
              f"doors {', '.join(workload.door_choices)}",
              flush=True)
        if workload.mcp_note:
            print(workload.mcp_note, flush=True)
        started = time.monotonic()
        await workload.run(args.workers, seconds=args.seconds)
        elapsed = time.monotonic() - started
        invariants = await check(workload.ledger, database, files_root, args.disk)
        report(workload.ledger, invariants, elapsed)
        return 0 if all(i.ok for i in invariants) else 1
    finally:
        doors.close()
        database.close()


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the clients run (default 60)")
    parser.add_argument("--workers", type=int, default=32, help="concurrent clients (default 32)")
    parser.add_argument("--processes", type=int, default=1, help="`restify serve --processes` (default 1)")
    parser.add_argument("--disk", choices=("local", "gridfs"), default="local", help="file disk (default local)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the operation choices")
    parser.add_argument("--real-hashing", action="store_true",
                        help="keep the default argon2 cost (default: a cheap one, so registrations do not dominate)")
    args = parser.parse_args(argv)
    if args.workers < 1 or args.processes < 1 or args.seconds <= 0:
        parser.error("--workers, --processes and --seconds must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    return in_workspace("restify-soak-", lambda workspace: _run(workspace, args))


def _run(workspace: Workspace, args: argparse.Namespace) -> int:
    from bench.run import HOST
    from storage.embedded import free_port

    database = workspace.start_database()
    port, db_name, files_root = free_port(), "soak", workspace.dir / "storage"
    env = {**os.environ, "MONGODB_URI": database.uri, "RESTIFY_DATABASE_NAME": db_name,
           "RESTIFY_FILES_ROOT": str(files_root), "RESTIFY_FILES_DISK": args.disk,
           # Every soak client registers from this one address, far past a person's pace.
           "RESTIFY_AUTH_REGISTRATIONS_PER_ADDRESS": "1000000",
           # Its few users write far past one user's allowed pace: the soak is of races, not of the pace.
           "RESTIFY_THROTTLE_WRITES_PER_MINUTE": "0"}
    if not args.real_hashing:
        env.update(RESTIFY_AUTH_ARGON2_TIME_COST="1", RESTIFY_AUTH_ARGON2_MEMORY_KIB="1024")
    service = workspace.serve(env, port, args.processes)
    print(f"temp dir {workspace.dir}; service on {HOST}:{port} ({args.processes} process(es)); "
          f"database {database.uri}", flush=True)
    code = asyncio.run(_soak(database.uri, db_name, f"http://{HOST}:{port}", files_root, args))
    service.check_alive()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
