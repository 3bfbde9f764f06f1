"""Hostile and malformed input: each gets a 4xx JSON error with an exact message, and nothing is written."""
import uuid

import pytest

import storage
from tests.policy_rules import rules  # noqa: F401  (a fixture)

PREFIX = "/api/restify"
INVALID = "The given data was invalid."
NOT_JSON = "The request body is not valid JSON: "
NOT_AN_OBJECT = {"message": "The request body must be a JSON object."}
NOT_FOUND = {"message": "Not found."}
METHOD_NOT_ALLOWED = {"message": "Method not allowed."}
TOO_LARGE = {"message": "The request body is too large."}
JSON_TYPE = "application/json; charset=UTF-8"
COLLECTIONS = ("users", "personal_access_tokens", "posts", "comments", "tags")

# Every door that reads a JSON body; {id} is Ann's post.
WRITE_TARGETS = [
    ("POST", "/api/restify/posts"),
    ("PUT", "/api/restify/posts/{id}"),
    ("PATCH", "/api/restify/posts/{id}"),
    ("POST", "/api/restify/posts/{id}"),
    ("POST", "/api/register"),
    ("POST", "/api/login"),
]


def invalid(**errors: str) -> dict:
    return {"message": INVALID, "errors": {name: [message] for name, message in errors.items()}}


async def snapshot(db) -> dict[str, list[dict]]:
    """Everything the application can write, to compare before and after a request."""
    return {name: await db.collection(name).find(storage.Filter(), sort=[("id", 1)]) for name in COLLECTIONS}


@pytest.fixture
def ann(api, io_loop):
    """Ann, registered as ann@example.com, with one post."""
    async def make():
        user = await api.register("Ann", email="ann@example.com")
        post = await api.post(f"{PREFIX}/posts", {"title": "Hello", "body": "Text"}, token=user["token"])
        return {**user, "post": post.json["data"]["id"]}
    return io_loop.run_sync(make)


async def send_raw(api, db, ann, method: str, path: str, body: bytes | str, content_type="application/json",
                   **headers: str):
    """Sends `body` as is with Ann's token; asserts nothing was written; returns the response."""
    before = await snapshot(db)
    response = await api.request(method, path.format(id=ann["post"]), body=body, token=ann["token"],
                                 headers={"Content-Type": content_type, **headers})
    assert response.headers["Content-Type"] == JSON_TYPE
    assert await snapshot(db) == before
    return response


async def send_json(api, db, ann, method: str, path: str, body):
    """Sends `body` as JSON with Ann's token ("{id}" values become her post's id); asserts nothing was written."""
    body = {k: ann["post"] if v == "{id}" else v for k, v in body.items()}
    before = await snapshot(db)
    response = await api.request(method, path.format(id=ann["post"]), body, token=ann["token"])
    assert response.headers["Content-Type"] == JSON_TYPE
    assert await snapshot(db) == before
    return response


# -- malformed JSON ----------------------------------------------------------------------------
@pytest.mark.parametrize("method, path", WRITE_TARGETS)
@pytest.mark.parametrize("body", [b'{"title":', b"{'title': 'x'}", b'{"title": "x",}', b"title=x", b'{"title": "x"} {}'])
async def test_malformed_json_is_400(api, db, ann, method, path, body):
    response = await send_raw(api, db, ann, method, path, body)
    # A fixed text: the decoder's own words (positions, Python's names) are not for clients.
    assert (response.status, response.json) == (400, {"message": "The request body is not valid JSON."})


@pytest.mark.parametrize("method, path", WRITE_TARGETS)
@pytest.mark.parametrize("body", [b"[]", b'[{"title": "x"}]', b"1", b"-2.5", b'"title"', b"null", b"true"])
async def test_a_json_value_that_is_not_an_object_is_400(api, db, ann, method, path, body):
    response = await send_raw(api, db, ann, method, path, body)
    assert (response.status, response.json) == (400, NOT_AN_OBJECT)


@pytest.mark.parametrize("method, path", WRITE_TARGETS)
@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
async def test_nan_and_infinity_literals_are_400(api, db, ann, method, path, literal):
    body = f'{{"title": "x", "views": {literal}, "email": "a@b.cd", "password": "secret-pass"}}'
    response = await send_raw(api, db, ann, method, path, body)
    assert (response.status, response.json) == (400, {"message": f"{NOT_JSON}{literal} is not a JSON number."})


@pytest.mark.parametrize("method, path", WRITE_TARGETS)
@pytest.mark.parametrize("body", ["[" * 100_000, '{"a":' * 100_000, '{"title": ' + "[" * 100_000])
async def test_deeply_nested_json_is_400(api, db, ann, method, path, body):
    response = await send_raw(api, db, ann, method, path, body)
    assert (response.status, response.json) == (400, {"message": f"{NOT_JSON}it is nested too deeply."})


async def test_nested_json_within_limits_is_still_type_checked(api, db, ann):
    response = await send_raw(api, db, ann, "POST", "/api/restify/posts", '{"title": ' + "[" * 500 + "]" * 500 + "}")
    assert (response.status, response.json) == (422, invalid(title="The title must be a string."))


@pytest.mark.parametrize("method, path", WRITE_TARGETS)
async def test_an_integer_literal_with_thousands_of_digits_is_400(api, db, ann, method, path):
    response = await send_raw(api, db, ann, method, path, '{"title": "x", "views": ' + "9" * 5000 + "}")
    assert (response.status, response.json) == (400, {"message": f"{NOT_JSON}a number in it has too many digits."})


# -- wrong types for typed fields ------------------------------------------------------------------
TYPE_ERRORS = [
    ({"title": 123}, {"title": "The title must be a string."}),
    ({"title": True}, {"title": "The title must be a string."}),
    ({"title": ["Hello"]}, {"title": "The title must be a string."}),
    ({"title": {"$gt": ""}}, {"title": "The title must be a string."}),
    ({"title": "x", "body": 5}, {"body": "The body must be a string."}),
    ({"title": "x", "published": "maybe"}, {"published": "The published field must be true or false."}),
    ({"title": "x", "published": 2}, {"published": "The published field must be true or false."}),
    ({"title": "x", "published": 1.0}, {"published": "The published field must be true or false."}),
    ({"title": "x", "published": {"$ne": False}}, {"published": "The published field must be true or false."}),
    ({"title": "x", "views": 1.5}, {"views": "The views must be an integer."}),
    ({"title": "x", "views": -1}, {"views": "The views must be at least 0."}),
    ({"title": "x", "views": "abc"}, {"views": "The views must be a number."}),
    ({"title": "x", "views": "1_000"}, {"views": "The views must be a number."}),
    ({"title": "x", "views": "nan"}, {"views": "The views must be a number."}),
    ({"title": "x", "views": True}, {"views": "The views must be a number."}),
    ({"title": "x", "views": [1]}, {"views": "The views must be a number."}),
    ({"title": "x", "views": {"$gt": 0}}, {"views": "The views must be a number."}),
    ({"title": "x", "views": 2**70}, {"views": "The views must be a number."}),
    ({"title": "x", "views": -(2**70)}, {"views": "The views must be a number."}),
]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
@pytest.mark.parametrize("body, errors", TYPE_ERRORS)
async def test_wrong_types_for_typed_post_fields_are_422(api, db, ann, method, body, errors):
    path = "/api/restify/posts" if method == "POST" else "/api/restify/posts/{id}"
    response = await send_json(api, db, ann, method, path, body)
    assert (response.status, response.json) == (422, invalid(**errors))


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
@pytest.mark.parametrize("raw, message", [
    (b"1e400", "The views must be a number."),           # parses as float infinity
    (b"-1e400", "The views must be a number."),
    (b'"1e400"', "The views must be a number."),
    (b"1e300", "The views must be an integer."),         # integral, but beyond 64 bits
    (b"9.3e18", "The views must be an integer."),
    (b'"1e300"', "The views must be an integer."),
    (b"9223372036854775808", "The views must be a number."),
])
async def test_huge_numbers_are_422_never_500(api, db, ann, method, raw, message):
    path = "/api/restify/posts" if method == "POST" else "/api/restify/posts/{id}"
    response = await send_raw(api, db, ann, method, path, b'{"title": "x", "views": ' + raw + b"}")
    assert (response.status, response.json) == (422, invalid(views=message))


async def test_the_largest_64_bit_integer_is_stored(api, db, ann):
    response = await api.post(f"{PREFIX}/posts", {"title": "x", "views": 2**63 - 1}, token=ann["token"])
    assert response.status == 201
    assert (await db.collection("posts").find_by_id(response.json["data"]["id"]))["views"] == 2**63 - 1


@pytest.mark.parametrize("path, body, errors", [
    ("/api/restify/comments", {"body": 5, "post_id": "{id}"}, {"body": "The body must be a string."}),
    ("/api/restify/comments", {"body": "x", "post_id": {"$ne": ""}}, {"post_id": "The post id must be a string."}),
    ("/api/restify/tags", {"name": ["a"]}, {"name": "The name must be a string."}),
    ("/api/register", {"name": "A", "email": ["a@b.cd"], "password": "secret-pass",
                       "password_confirmation": "secret-pass"}, {"email": "The email must be a string."}),
])
async def test_wrong_types_for_other_repositories_are_422(api, db, ann, path, body, errors):
    response = await send_json(api, db, ann, "POST", path, body)
    assert (response.status, response.json) == (422, invalid(**errors))


# -- strings far over their limits ------------------------------------------------------------------
@pytest.mark.parametrize("path, body, errors", [
    ("/api/restify/posts", {"title": "x" * 256}, {"title": "The title may not be greater than 255 characters."}),
    ("/api/restify/posts", {"title": "x" * 500_000}, {"title": "The title may not be greater than 255 characters."}),
    ("/api/restify/posts", {"title": "x", "body": "y" * 65_536},
     {"body": "The body may not be greater than 65535 characters."}),
    ("/api/restify/comments", {"body": "y" * 5001, "post_id": "{id}"},
     {"body": "The body may not be greater than 5000 characters."}),
    ("/api/restify/tags", {"name": "n" * 10_000}, {"name": "The name may not be greater than 50 characters."}),
    ("/api/register", {"name": "A" * 300_000, "email": "long@example.com", "password": "secret-pass",
                       "password_confirmation": "secret-pass"},
     {"name": "The name may not be greater than 255 characters."}),
])
async def test_strings_far_over_their_limits_are_422(api, db, ann, path, body, errors):
    response = await send_json(api, db, ann, "POST", path, body)
    assert (response.status, response.json) == (422, invalid(**errors))


async def test_a_bio_over_its_limit_is_422_on_update(api, db, ann):
    response = await send_json(api, db, ann, "PATCH", f"/api/restify/users/{ann['id']}", {"bio": "b" * 2001})
    assert (response.status, response.json) == (422, invalid(bio="The bio may not be greater than 2000 characters."))


# -- MongoDB operators in bodies -----------------------------------------------------------------------
@pytest.mark.parametrize("body, errors", [
    ({"email": {"$gt": ""}, "password": "secret-pass"}, {"email": "The email must be a string."}),
    ({"email": {"$ne": None}, "password": {"$ne": None}},
     {"email": "The email must be a string.", "password": "The password must be a string."}),
    ({"email": ["ann@example.com"], "password": "secret-pass"}, {"email": "The email must be a string."}),
])
async def test_operators_in_login_credentials_never_match_a_user(api, db, ann, body, errors):
    response = await send_json(api, db, ann, "POST", "/api/login", body)
    assert (response.status, response.json) == (422, invalid(**errors))


# Surrounding spaces are trimmed (and case ignored): see test_auth's identity tests.
@pytest.mark.parametrize("email", [".*", "ann@example.com.", "^ann@example\\.com$"])
async def test_login_emails_are_matched_literally(api, db, ann, email):
    response = await send_json(api, db, ann, "POST", "/api/login", {"email": email, "password": "secret-pass"})
    assert (response.status, response.json) == (401, {"message": "These credentials do not match our records."})


async def test_a_top_level_set_operator_is_ignored_on_store(api, db, ann):
    body = {"title": "Plain", "$set": {"user_id": "evil", "title": "Pwned"}, "$where": "1", "title.$": "x"}
    response = await api.post(f"{PREFIX}/posts", body, token=ann["token"])
    assert response.status == 201
    stored = await db.collection("posts").find_by_id(response.json["data"]["id"])
    assert set(stored) == {"id", "title", "views", "published", "user_id", "created_at", "updated_at", "tag_ids",
                           storage.VERSION}
    assert (stored["title"], stored["user_id"]) == ("Plain", ann["id"])


async def test_a_top_level_set_operator_is_ignored_on_patch(api, db, ann):
    before = await db.collection("posts").find_by_id(ann["post"])
    response = await api.patch(f"{PREFIX}/posts/{ann['post']}", {"$set": {"title": "Pwned", "user_id": "evil"},
                                                                  "$unset": {"title": ""}}, token=ann["token"])
    assert response.status == 200
    after = await db.collection("posts").find_by_id(ann["post"])
    written = ("updated_at", storage.VERSION)  # what any write changes
    assert {k: v for k, v in after.items() if k not in written} == {k: v for k, v in before.items()
                                                                     if k not in written}


async def test_an_operator_as_a_unique_value_is_refused_before_the_database(api, db, ann):
    response = await send_json(api, db, ann, "POST", "/api/restify/tags", {"name": {"$exists": True}})
    assert (response.status, response.json) == (422, invalid(name="The name must be a string."))


# -- operators and bad values in query strings ------------------------------------------------------------
@pytest.mark.parametrize("name", ["user_id[$ne]", "$where", "user_id.$ne", "title[$regex]", "published[]"])
@pytest.mark.parametrize("path", ["/api/restify/posts", "/api/restify/posts/{id}"])
async def test_operators_in_query_parameter_names_are_400(api, ann, name, path):
    response = await api.get(f"{path.format(id=ann['post'])}?{name}=x")
    assert response.status == 400
    assert response.json == {
        "message": f"The query parameter {name!r} is not allowed: operators cannot be sent in a query.",
        "errors": {name: ["Operators are not allowed in query parameters."]},
    }


@pytest.mark.parametrize("query", ["user_id=%7B%22%24ne%22%3A%20%22%22%7D", "user_id=.%2A", "search=.%2A",
                                   "search=%5EH", "published=true&user_id=%7B%7D"])
async def test_operator_like_query_values_are_matched_literally(api, ann, query):
    response = await api.get(f"{PREFIX}/posts?{query}")
    assert response.status == 200
    assert response.json["data"] == []
    assert response.json["meta"]["total"] == 0


@pytest.mark.parametrize("query, message, errors", [
    ("published=maybe", "The published filter must be true or false.",
     {"published": ["The published filter must be true or false."]}),
    # Each names the valid choices (the sortable fields, the relations).
    ("sort=body", "The field 'body' is not sortable; the sortable fields are: created_at, id, relevance, title, updated_at, user.name, views.",
     {"sort": ["The field 'body' is not sortable; the sortable fields are: created_at, id, relevance, title, updated_at, user.name, views."]}),
    ("sort=-password", "The field 'password' is not sortable; the sortable fields are: created_at, id, relevance, title, updated_at, user.name, views.",
     {"sort": ["The field 'password' is not sortable; the sortable fields are: created_at, id, relevance, title, updated_at, user.name, views."]}),
    ("related=secrets", "Unknown relations: secrets (the relations of posts: comments, tags, user).",
     {"related": ["Unknown relations: secrets (the relations of posts: comments, tags, user)."]}),
    ("related=user.posts.user.posts", "The relation path 'user.posts.user.posts' is deeper than 3 levels.",
     {"related": ["The relation path 'user.posts.user.posts' is too deep."]}),
    ("search=" + "s" * 256, "The search text may not be longer than 255 characters.",
     {"search": ["The search may not be greater than 255 characters."]}),
    ("perPage=99999999999999999999", "The perPage parameter must be a positive integer.",
     {"perPage": ["The perPage must be a positive integer."]}),
])
async def test_bad_query_values_are_400_naming_the_parameter(api, ann, query, message, errors):
    response = await api.get(f"{PREFIX}/posts?{query}")
    assert (response.status, response.json) == (400, {"message": message, "errors": errors})


@pytest.mark.parametrize("page", [2**63 - 1, 2**62])
async def test_a_page_far_beyond_the_last_is_an_empty_page_not_a_500(api, ann, page):
    response = await api.get(f"{PREFIX}/posts?page={page}")
    assert response.status == 200
    assert response.json["data"] == []
    assert response.json["meta"]["current_page"] == page


# -- ids, resources, paths, methods ----------------------------------------------------------------
@pytest.mark.parametrize("bad_id", ["not-an-id", "z" * 24, "0" * 23, "0" * 25, "0" * 24, "%7B%22%24ne%22%3A1%7D"])
@pytest.mark.parametrize("method, body", [("GET", None), ("PUT", {"title": "x"}), ("PATCH", {"title": "x"}),
                                          ("POST", {"title": "x"}), ("DELETE", None)])
async def test_an_id_that_is_not_a_record_is_404(api, db, ann, bad_id, method, body):
    before = await snapshot(db)
    response = await api.request(method, f"{PREFIX}/posts/{bad_id}", body, token=ann["token"])
    assert (response.status, response.json) == (404, NOT_FOUND)
    assert await snapshot(db) == before


@pytest.mark.parametrize("name", ["nope", "Posts", "post", "personal_access_tokens", "__proto__", "models"])
@pytest.mark.parametrize("method, path, body", [
    ("GET", "/{name}", None), ("POST", "/{name}", {"title": "x"}), ("GET", "/{name}/{id}", None),
    ("PUT", "/{name}/{id}", {"title": "x"}), ("DELETE", "/{name}/{id}", None),
])
async def test_unknown_resource_names_are_404_naming_the_repositories(api, db, ann, name, method, path, body):
    before = await snapshot(db)
    response = await api.request(method, PREFIX + path.format(name=name, id=ann["post"]), body, token=ann["token"])
    assert (response.status, response.json) == (
        404, {"message": f"No repository {name!r}; the repositories are: comments, posts, tags, users."})
    assert await snapshot(db) == before


async def test_an_unknown_repository_names_none_a_policy_hides_and_none_to_a_guest(api, ann, rules):
    rules("tags", allow_restify=lambda user: False)
    response = await api.get(f"{PREFIX}/nope", token=ann["token"])
    assert (response.status, response.json) == (
        404, {"message": "No repository 'nope'; the repositories are: comments, posts, users."})
    response = await api.get(f"{PREFIX}/nope")  # a guest: the policies may let guests in, but no list
    assert (response.status, response.json) == (404, {"message": "No repository 'nope'."})


@pytest.mark.parametrize("path", ["/", "/nope", "/api", "/api/restify", "/api/restify/", "/api/restify/posts/",
                                  "/api/restify/posts/{id}/", "/api/restify/posts/{id}/comments",
                                  "/api/registers", "/api/restify/posts/{id}/comments/1"])
@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
async def test_unknown_paths_are_json_404(api, ann, path, method):
    response = await api.request(method, path.format(id=ann["post"]), token=ann["token"])
    assert (response.status, response.json) == (404, NOT_FOUND)
    assert response.headers["Content-Type"] == JSON_TYPE


@pytest.mark.parametrize("method, path", [
    ("DELETE", "/api/restify/posts"), ("PUT", "/api/restify/posts"), ("PATCH", "/api/restify/posts"),
    ("OPTIONS", "/api/restify/posts"), ("PROPFIND", "/api/restify/posts"), ("OPTIONS", "/api/restify/posts/{id}"),
    ("GET", "/api/register"), ("GET", "/api/login"), ("GET", "/api/logout"), ("DELETE", "/api/logout"),
    ("PUT", "/api/register"),
])
async def test_unsupported_methods_are_json_405(api, db, ann, method, path):
    before = await snapshot(db)
    response = await api.request(method, path.format(id=ann["post"]), token=ann["token"])
    assert (response.status, response.json) == (405, METHOD_NOT_ALLOWED)
    assert response.headers["Content-Type"] == JSON_TYPE
    assert await snapshot(db) == before


# -- non-UTF-8 bytes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("method, path", WRITE_TARGETS)
async def test_non_utf8_bytes_in_a_json_body_are_400(api, db, ann, method, path):
    response = await send_raw(api, db, ann, method, path, b'{"title": "\xff\xfe"}')
    assert (response.status, response.json) == (400, {"message": f"{NOT_JSON}it is not UTF-8 text."})


async def test_non_utf8_bytes_in_a_form_field_are_400(api, db, ann):
    boundary = uuid.uuid4().hex
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\n'.encode() + b"\xff\xfe"
            + f"\r\n--{boundary}--\r\n".encode())
    response = await send_raw(api, db, ann, "POST", "/api/restify/posts/{id}", body,
                              content_type=f"multipart/form-data; boundary={boundary}")
    assert (response.status, response.json) == (400, {"message": "The form field 'title' is not valid UTF-8."})


@pytest.mark.parametrize("path", ["/api/restify/posts?search=%FF", "/api/restify/posts?user_id=%C3%28",
                                  "/api/restify/posts/{id}?related=%FF"])
async def test_non_utf8_bytes_in_a_query_value_are_400(api, ann, path):
    name = path.split("?")[1].split("=")[0]
    response = await api.get(path.format(id=ann["post"]))
    assert (response.status, response.json) == (400, {"message": f"The query parameter {name!r} is not valid UTF-8."})


async def test_non_utf8_bytes_in_a_query_value_on_store_are_400_and_write_nothing(api, db, ann):
    before = await snapshot(db)
    response = await api.post(f"{PREFIX}/posts?x=%FF", {"title": "x"}, token=ann["token"])
    assert (response.status, response.json) == (400, {"message": "The query parameter 'x' is not valid UTF-8."})
    assert await snapshot(db) == before


async def test_non_utf8_bytes_in_the_path_are_400(api, ann):
    response = await api.get(f"{PREFIX}/%FF")
    assert (response.status, response.json) == (400, {"message": "The request is malformed."})
    assert response.headers["Content-Type"] == JSON_TYPE


# -- errors are JSON whatever the client accepts ---------------------------------------------------------
@pytest.mark.parametrize("method, path, body, status", [
    ("GET", "/nope", None, 404),
    ("GET", "/api/restify/nope", None, 404),
    ("GET", "/api/restify/posts/not-an-id", None, 404),
    ("DELETE", "/api/restify/posts", None, 405),
    ("POST", "/api/restify/posts", b"{", 400),
    ("POST", "/api/restify/posts", b"{}", 401),
    ("GET", "/api/restify/posts?sort=body", None, 400),
    ("POST", "/api/register", b"{}", 422),
])
async def test_errors_are_json_even_when_html_is_accepted(api, method, path, body, status):
    response = await api.request(method, path, body=body, headers={"Accept": "text/html,application/xhtml+xml",
                                                                    "Content-Type": "application/json"})
    assert response.status == status
    assert response.headers["Content-Type"] == JSON_TYPE
    assert isinstance(response.json["message"], str)
    assert b"<html" not in response.body.lower() and b"Traceback" not in response.body


# -- bodies over the size limit ------------------------------------------------------------------------------
class TestBodyLimit:
    LIMIT = 1000

    @pytest.fixture
    def config(self, config):
        return {**config, "server": {"max_body_bytes": self.LIMIT}}

    def oversized(self, size: int = 2000) -> bytes:
        head = b'{"title": "'
        return head + b"x" * (size - len(head) - 2) + b'"}'

    @pytest.mark.parametrize("method, path", WRITE_TARGETS)
    async def test_a_body_over_the_limit_is_413(self, api, db, ann, method, path):
        response = await send_raw(api, db, ann, method, path, self.oversized())
        assert (response.status, response.json) == (413, TOO_LARGE)

    async def test_a_body_at_the_limit_is_accepted(self, api, db, ann):
        head = b'{"title": "At the limit", "body": "'
        body = head + b"y" * (self.LIMIT - len(head) - 2) + b'"}'
        assert len(body) == self.LIMIT
        response = await api.post(f"{PREFIX}/posts", body=body, token=ann["token"],
                                  headers={"Content-Type": "application/json"})
        assert response.status == 201, response.body

    async def test_a_chunked_body_over_the_limit_is_413(self, api, db, ann, http_server_client):
        before = await snapshot(db)
        body = self.oversized(5000)

        async def produce(write):
            for start in range(0, len(body), 500):
                await write(body[start:start + 500])

        result = await http_server_client.fetch(
            f"{PREFIX}/posts", method="POST", body_producer=produce, raise_error=False,
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {ann['token']}"})
        assert result.code == 413
        assert result.headers["Content-Type"] == JSON_TYPE
        assert result.body == b'{"message":"The request body is too large."}'
        assert await snapshot(db) == before

    async def test_an_oversized_registration_creates_no_user(self, api, db, ann):
        body = {"name": "Eve", "email": "eve@example.com", "password": "secret-pass",
                "password_confirmation": "secret-pass", "bio": "b" * 2000}
        response = await send_json(api, db, ann, "POST", "/api/register", body)
        assert (response.status, response.json) == (413, TOO_LARGE)

    async def test_errors_for_oversized_bodies_are_json_even_when_html_is_accepted(self, api, db, ann):
        response = await send_raw(api, db, ann, "POST", "/api/restify/posts", self.oversized(),
                                  Accept="text/html")
        assert (response.status, response.json) == (413, TOO_LARGE)


# -- lone surrogates: valid JSON escapes that are not text ----------------------------------------------
@pytest.mark.parametrize("method, path", WRITE_TARGETS)
async def test_a_lone_surrogate_in_a_json_body_is_400(api, db, ann, method, path):
    response = await send_raw(api, db, ann, method, path, b'{"title": "bad \\ud800 text"}')
    assert response.status == 400
    assert response.json == {"message": NOT_JSON + "a string holds a lone surrogate (\\ud800)."}


async def test_a_lone_surrogate_in_a_graphql_query_is_a_json_answer(api):
    response = await api.request("POST", "/graphql", body=b'{"query": "{ \\ud800 }"}',
                                 headers={"Content-Type": "application/json"})
    assert response.status == 400
    assert response.headers["Content-Type"] == JSON_TYPE
    assert response.json == {"message": NOT_JSON + "a string holds a lone surrogate (\\ud800)."}


async def test_an_escaped_surrogate_pair_is_one_character_and_is_stored(api, db, ann):
    response = await api.request("POST", "/api/restify/posts", body=b'{"title": "smile \\ud83d\\ude00"}',
                                 token=ann["token"], headers={"Content-Type": "application/json"})
    assert response.status == 201, response.body
    assert response.json["data"]["attributes"]["title"] == "smile \U0001F600"
    assert (await db.collection("posts").find_by_id(response.json["data"]["id"]))["title"] == "smile \U0001F600"
