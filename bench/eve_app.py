"""Eve (2.3: Flask and PyMongo) serving the benchmark's posts: the peer `python -m bench.run` measures
beside the service and the bare app.

    EVE_MONGO_URI=mongodb://... EVE_DB=bench gunicorn -k gthread -w N --threads 8 'bench.eve_app:make_app()'

Its token auth reads the database on every request, as the service does without a cache of who is
asking: the token by its id (the service's own `personal_access_tokens`: `<id>|<secret>`, the secret
checked by its SHA-256), then its user. Lists are served without a total (Eve's
OPTIMIZE_PAGINATION_FOR_SPEED; the service counts), 15 to a page; GET is public, as on the service;
`/member_posts` is the same page behind the token (the authenticated index: Eve has no relations).
Installed by the `bench` extra (`pip install -e '.[bench]'`).
"""
import hashlib
import hmac
import os
from typing import Any

from bson import ObjectId
from bson.errors import InvalidId
from eve import Eve
from eve.auth import TokenAuth
from flask import current_app

TOKENS = "personal_access_tokens"


class StoredTokens(TokenAuth):
    def check_auth(self, token: str, allowed_roles: Any, resource: str, method: str) -> bool:
        token_id, _, secret = token.partition("|")
        try:
            oid = ObjectId(token_id)
        except (InvalidId, TypeError):
            return False
        db = current_app.data.driver.db
        stored = db[TOKENS].find_one({"_id": oid})
        if stored is None or not hmac.compare_digest(stored.get("token_hash", ""),
                                                     hashlib.sha256(secret.encode()).hexdigest()):
            return False
        user_id = stored.get("user_id", "")
        return ObjectId.is_valid(user_id) and db["users"].find_one({"_id": ObjectId(user_id)}) is not None


POST_SCHEMA = {
    "title": {"type": "string", "required": True, "maxlength": 255},
    "body": {"type": "string", "nullable": True},
    "views": {"type": "integer", "min": 0},
    "published": {"type": "boolean"},
    "user_id": {"type": "string"},
}


def settings(uri: str, db: str) -> dict[str, Any]:
    return {
        "MONGO_URI": f"{uri.rstrip('/')}/{db}",
        "DOMAIN": {"posts": {"schema": POST_SCHEMA, "resource_methods": ["GET", "POST"], "item_methods": ["GET"],
                             "public_methods": ["GET"], "public_item_methods": []},
                   # The same posts, a page of which needs a token (the authenticated index).
                   "member_posts": {"schema": POST_SCHEMA, "datasource": {"source": "posts"},
                                    "resource_methods": ["GET"], "item_methods": [], "public_methods": []}},
        "PAGINATION_DEFAULT": 15,
        "OPTIMIZE_PAGINATION_FOR_SPEED": True,
        "IF_MATCH": False,
        "HATEOAS": False,
        "RENDERERS": ["eve.render.JSONRenderer"],
    }


def make_app() -> Eve:
    return Eve(settings=settings(os.environ["EVE_MONGO_URI"], os.environ.get("EVE_DB", "bench")), auth=StoredTokens)
