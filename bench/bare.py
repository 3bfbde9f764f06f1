"""The baseline: a minimal bare Tornado + Motor app doing the same database work as the
service for the benchmarked routes, and nothing else (no framework, no access log).

It sends the very query shapes `storage/` sends, so the ratio service ÷ bare measures
the framework, not a different use of the database:
  index        find {} sort _id limit 16 (a page and one more, as the service reads), count
               (estimated_document_count for an empty filter, as storage does; aggregate
               [$match, $count] otherwise; none with count=none)
  filters      views[between], views[gte], user_id[in] and search, compiled as storage does
  page/cursor  skip (page - 1) * perPage; a cursor's id as the embedded server's _id-index bound;
               sort=-views (views descending, id) and its cursor in parts, as storage reads it
  related      + users {_id: {$in}} + their posts counted ($match user_id $in, $group: the demo's
               `post_count`) + comments {post_id: {$in}} sort _id
  show         find_one {_id} + comments {post_id: id} sort _id limit 15 + tags {_id: {$in}}
               (what a hand-written app sends for one post)
  store        insert_one
  aggregate    [$match (the filters, when any), $group by user_id (count, $sum and $avg of views), $limit 1001]
  bearer token find_one token by _id, compare SHA-256, find_one user by _id (what the service does
               for a token it does not remember; it remembers who a token is)

    python -m bench.bare --uri mongodb://127.0.0.1:27017 --db bench --port 8001 --processes 2
"""
import argparse
import asyncio
import hashlib
import hmac
import json
import os
import re
import signal
from datetime import datetime, timezone
from typing import Any

from bson import ObjectId
from motor.motor_asyncio import AsyncIOMotorClient
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from tornado.web import Application, HTTPError, RequestHandler

PER_PAGE = 15
RELATABLE_PER_PAGE = 15
MAX_GROUPS = 1000  # aggregate.max_groups


def _iso(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return value


def _resource(kind: str, document: dict[str, Any], hidden: tuple[str, ...] = ()) -> dict[str, Any]:
    attributes = {k: _iso(v) for k, v in document.items() if k != "_id" and k not in hidden}
    return {"id": str(document["_id"]), "type": kind, "attributes": attributes}


def _user(document: dict[str, Any], post_counts: dict[str, int]) -> dict[str, Any]:
    shown = _resource("users", document, ("password",))
    shown["attributes"]["post_count"] = post_counts.get(shown["id"], 0)
    return shown


def _oid(value: Any) -> ObjectId | None:
    return ObjectId(value) if isinstance(value, str) and ObjectId.is_valid(value) else None


class Base(RequestHandler):
    def initialize(self, db: Any) -> None:
        self.db = db

    async def user(self) -> dict[str, Any] | None:
        header = self.request.headers.get("Authorization", "")
        if not header:
            return None
        token_id, _, secret = header.partition(" ")[2].strip().partition("|")
        oid = _oid(token_id)
        token = await self.db.personal_access_tokens.find_one({"_id": oid}) if oid else None
        digest = hashlib.sha256(secret.encode()).hexdigest()
        if token is None or not hmac.compare_digest(token.get("token_hash", ""), digest):
            raise HTTPError(401)
        user = await self.db.users.find_one({"_id": _oid(token["user_id"])})
        if user is None:
            raise HTTPError(401)
        return user

    def send(self, body: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(json.dumps(body, separators=(",", ":")))


def _where(handler: RequestHandler) -> dict[str, Any]:
    """The filter storage compiles for the benchmarked parameters: one plain document (range and
    `in` operators, and one search field as an inline case-insensitive regex)."""
    where: dict[str, Any] = {}
    views: dict[str, int] = {}
    between = handler.get_argument("views[between]", None)
    if between:
        low, high = between.split(",")
        views.update({"$gte": int(low), "$lte": int(high)})
    if handler.get_argument("views[gte]", None):
        views["$gte"] = int(handler.get_argument("views[gte]"))
    if views:
        where["views"] = views
    if handler.get_argument("user_id[in]", None):
        where["user_id"] = {"$in": handler.get_argument("user_id[in]").split(",")}
    search = handler.get_argument("search", "").strip()
    if search:
        where["title"] = {"$regex": "(?i)" + re.escape(search)}
    joined = handler.get_argument("filter", None)
    if joined:  # {"any": [{"<field>": {"between"|"gte"|"in": v}}, ...]}: one $or, inside $and, as storage sends it
        branches = [{name: _operators(operations) for name, operations in branch.items()}
                    for branch in json.loads(joined)["any"]]
        return {"$and": [*([where] if where else []), {"$or": branches}]}
    return where


def _operators(operations: dict[str, Any]) -> dict[str, Any]:
    if "between" in operations:
        low, high = operations["between"]
        return {"$gte": low, "$lte": high}
    return {f"${name}": value for name, value in operations.items()}


def _cursor_values(token: str) -> list[Any]:
    """The sort values a service cursor starts after, the id last: unsealed with the service's cursor
    secret, which the benchmark gives both servers (RESTIFY_QUERY_CURSOR_SECRET); its binding is not checked."""
    from service.core.reading.cursors import unseal
    return list(unseal(os.environ["RESTIFY_QUERY_CURSOR_SECRET"].encode(), token)[1].values)


async def _after_views(posts: Any, views: int, position: ObjectId, limit: int) -> list[dict]:
    """After (views, id) in the order views descending, id ascending, as storage reads it on the
    embedded server (storage/keyset_reads.py): the same views after the id (an id page), then lower
    views, then none, until the page is full."""
    found = await posts.find({"views": views, "_id": {"$ne": position}}).sort([("_id", 1)]).hint([("_id", 1)]) \
        .min([("_id", str(position))]).limit(limit).to_list(None)
    for part in ({"views": {"$lt": views}}, {"views": {"$in": [None]}}):
        if len(found) >= limit:
            break
        found += await posts.find(part).sort([("views", -1), ("_id", 1)]).limit(limit - len(found)).to_list(None)
    return found


class Aggregate(Base):
    """`GET /api/restify/posts/aggregate?group=user_id&metrics=count,sum:views,avg:views` (and the
    benchmarked filters): the service's pipeline, written out, and its answer."""

    async def get(self) -> None:
        await self.user()
        where = _where(self)
        group = {"_id": "$user_id", "count": {"$sum": 1}, "sum__views": {"$sum": "$views"},
                 "avg__views": {"$avg": "$views"}}
        pipeline = [*([{"$match": where}] if where else []), {"$group": group}, {"$limit": MAX_GROUPS + 1}]
        rows = await self.db.posts.aggregate(pipeline).to_list(None)
        data = [{"group": {"user_id": row["_id"]}, "count": row["count"], "sum_views": row["sum__views"] or 0,
                 "avg_views": row["avg__views"]} for row in rows]
        data.sort(key=lambda item: (item["group"]["user_id"] is not None, item["group"]["user_id"] or ""))
        self.send({"data": data, "meta": {"groups": len(data)}})


class Posts(Base):
    async def get(self) -> None:
        await self.user()
        per_page = int(self.get_argument("perPage", str(PER_PAGE)))
        page = int(self.get_argument("page", "1"))
        related = {r for r in self.get_argument("related", "").split(",") if r}
        where = _where(self)
        by_views = self.get_argument("sort", "") == "-views"
        sort = [("views", -1), ("_id", 1)] if by_views else [("_id", 1)]
        token = self.get_argument("cursor", None)
        if token and by_views:  # the benchmark sends no filter with it
            views, position = _cursor_values(token)
            found = None
            posts = (await _after_views(self.db.posts, views, ObjectId(position), per_page + 1))[:per_page]
        elif token:
            # A keyset page after the cursor's id, as storage reads it on the embedded server: bounded by
            # `min` on the _id index, the position itself excluded (storage/id_pages.py).
            position = ObjectId(_cursor_values(token)[-1])
            found = self.db.posts.find({**where, "_id": {"$ne": position}}).hint([("_id", 1)]) \
                .min([("_id", str(position))])
        else:
            found = self.db.posts.find(where).skip((page - 1) * per_page)
        if found is not None:
            # One more than a page, as the service reads: it tells whether a next page exists.
            posts = (await found.sort(sort).limit(per_page + 1).to_list(None))[:per_page]
        if self.get_argument("count", "exact") == "none":
            total = None
        elif where:
            rows = await self.db.posts.aggregate([{"$match": where}, {"$count": "n"}]).to_list(1)
            total = rows[0]["n"] if rows else 0
        else:
            total = await self.db.posts.estimated_document_count()
        data = [_resource("posts", p) for p in posts]
        if "user" in related:
            ids = [o for o in dict.fromkeys(_oid(p.get("user_id")) for p in posts) if o]
            users = {str(u["_id"]): u for u in await self.db.users.find({"_id": {"$in": ids}}).to_list(None)}
            # The demo's users show `post_count`, computed per page: one grouped count of their posts.
            counted = await self.db.posts.aggregate([
                {"$match": {"user_id": {"$in": list(users)}}},
                {"$group": {"_id": "$user_id", "count": {"$sum": 1}}}, {"$limit": len(users) + 1}]).to_list(None)
            post_counts = {row["_id"]: row["count"] for row in counted}
            for item, post in zip(data, posts, strict=True):
                user = users.get(post.get("user_id"))
                item.setdefault("relationships", {})["user"] = [_user(user, post_counts)] if user else []
        if "comments" in related:
            ids = [str(p["_id"]) for p in posts]
            by_post: dict[str, list[dict]] = {i: [] for i in ids}
            async for comment in self.db.comments.find({"post_id": {"$in": ids}}).sort([("_id", 1)]):
                by_post.get(comment.get("post_id"), []).append(_resource("comments", comment))
            for item in data:
                item.setdefault("relationships", {})["comments"] = by_post[item["id"]]
        path = f"{self.request.protocol}://{self.request.host}{self.request.path}"
        last = max(1, -(-total // per_page)) if total is not None else None
        self.send({"meta": {"current_page": page, "per_page": per_page, "total": total, "last_page": last,
                            "path": path},
                   "links": {"first": f"{path}?page=1", "last": f"{path}?page={last}", "path": path},
                   "data": data})

    async def post(self) -> None:
        user = await self.user()
        if user is None:
            raise HTTPError(401)
        payload = json.loads(self.request.body)
        if not isinstance(payload.get("title"), str) or len(payload["title"]) > 255:
            raise HTTPError(422)
        now = _iso(datetime.now(timezone.utc))  # stored as an ISO string, like the service's timestamps
        document = {"title": payload["title"], "body": payload.get("body"), "views": payload.get("views", 0),
                    "published": bool(payload.get("published", False)), "user_id": str(user["_id"]),
                    "cover": None, "created_at": now, "updated_at": now}
        await self.db.posts.insert_one(document)
        self.set_header("Location", f"{self.request.full_url().split('?')[0]}/{document['_id']}")
        self.send({"data": _resource("posts", document)}, 201)


class Post(Base):
    async def get(self, id: str) -> None:
        await self.user()
        oid = _oid(id)
        post = await self.db.posts.find_one({"_id": oid}) if oid else None
        if post is None:
            raise HTTPError(404)
        related = {r for r in self.get_argument("related", "").split(",") if r}
        item = _resource("posts", post)
        if "comments" in related:
            comments = await self.db.comments.find({"post_id": id}).sort([("_id", 1)]) \
                .limit(RELATABLE_PER_PAGE).to_list(None)
            item.setdefault("relationships", {})["comments"] = [_resource("comments", c) for c in comments]
        if "tags" in related:
            ids = [o for o in (_oid(t) for t in (post.get("tag_ids") or [])[:RELATABLE_PER_PAGE]) if o]
            tags = await self.db.tags.find({"_id": {"$in": ids}}).to_list(None) if ids else []
            item.setdefault("relationships", {})["tags"] = [_resource("tags", t) for t in tags]
        self.send({"data": item})


async def _serve(uri: str, db_name: str, port: int, host: str) -> None:
    # The client is built here, after any fork: a Motor client never crosses a fork.
    client = AsyncIOMotorClient(uri, tz_aware=True)
    state = {"db": client[db_name]}
    app = Application([(r"/api/restify/posts", Posts, state), (r"/api/restify/posts/aggregate", Aggregate, state),
                       (r"/api/restify/posts/([^/]+)", Post, state)])
    server = HTTPServer(app)
    server.add_sockets(bind_sockets(port, address=host, reuse_port=True))
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    print(f"bare serving http://{host}:{port} (pid {os.getpid()})", flush=True)  # one line per process
    await stop.wait()
    server.stop()
    client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uri", required=True)
    parser.add_argument("--db", default="restify")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args(argv)
    children: list[int] = []
    for _ in range(args.processes - 1):
        pid = os.fork()
        if pid == 0:
            try:
                asyncio.run(_serve(args.uri, args.db, args.port, args.host))
            finally:
                os._exit(0)
        children.append(pid)
    # The parent serves too; on exit it stops and reaps its children.
    try:
        asyncio.run(_serve(args.uri, args.db, args.port, args.host))
    finally:
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pid in children:
            os.waitpid(pid, 0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
