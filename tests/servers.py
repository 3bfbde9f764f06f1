"""Which database server the suite runs on, and whose query shapes `storage/` sends it.

`MONGODB_URI` names a MongoDB to run on (unset: the suite starts the embedded server).
`RESTIFY_DATABASE_PROFILE` is `database.profile` for every database the tests open: "mongodb" sends
MongoDB's shapes to the embedded server too, so CI runs MongoDB's code paths without a MongoDB. A test
that pins a shape only the embedded server is sent carries `@pytest.mark.embedded_shapes(reason)` and
is skipped where MongoDB's shapes are sent; one that needs a MongoDB shape the embedded server cannot
run carries `@pytest.mark.embedded_cannot(reason)` and is skipped where MongoDB's shapes are sent to
the embedded server (tests/conftest.py).
"""
import os

from storage.indexes import profile_name

EMBEDDED_SERVER = not os.environ.get("MONGODB_URI")
PROFILE = profile_name(os.environ.get("RESTIFY_DATABASE_PROFILE"))
# Whether storage/ sends the embedded server's shapes: its own profile, or forced.
EMBEDDED_SHAPES = PROFILE == "embedded" or (PROFILE == "auto" and EMBEDDED_SERVER)
MONGODB_SHAPES_ON_EMBEDDED = EMBEDDED_SERVER and not EMBEDDED_SHAPES

# The embedded server's limits met by MongoDB's shapes (`embedded_cannot` reasons).
NO_OBJECT_ID_IN_AGGREGATE = ("the embedded server's aggregate cannot bind an ObjectId (the command fails), and "
                             "MongoDB's count sends the ids as ObjectIds")
# The demo's post titles are `searchable(text=True)`: MongoDB's shapes search them by word (`$text`).
SUBSTRING_SEARCH = ("the demo's post titles are searchable(text=True), so MongoDB's shapes search them by word "
                    "($text), not by substring (tests/http/test_text_search.py)")


def keys_read(collection: str) -> tuple[str, str]:
    """The command that reads a page's keys alone: the embedded server is sent an aggregate, whose
    `$project` it reads in SQL (a find's projection it applies to each record it loads whole)."""
    return ("aggregate" if EMBEDDED_SHAPES else "find", collection)
