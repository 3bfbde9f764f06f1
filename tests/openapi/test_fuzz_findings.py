"""What the fuzzer found, kept as regular tests with the requests it sent (shrunk by hand).

A malformed form body (multipart without a boundary, a part header with a control
character, a Content-Encoding) made tornado's form parser raise, and the service
answered 500; it is now a 400 with a JSON message.
"""
import pytest

PREFIX = "/api/restify"
FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")

INVALID_FORM = {"message": "The request body is not a valid form (multipart/form-data or urlencoded)."}


def _part(name: str, value: str, boundary: str = "b0undary") -> bytes:
    return (f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
            f"--{boundary}--\r\n").encode()


async def _token(api) -> str:
    return (await api.register("Finder"))["token"]


@pytest.mark.parametrize("path", [f"{PREFIX}/posts", f"{PREFIX}/profile"])
async def test_multipart_without_a_boundary_is_a_400(api, path):
    token = await _token(api)
    # Found on every route that takes multipart: schemathesis sent a JSON body labelled multipart/form-data.
    response = await api.post(path, body=b'{"title": "0"}', token=token,
                              headers={"Content-Type": "multipart/form-data"})
    assert (response.status, response.json) == (400, INVALID_FORM)


async def test_multipart_part_name_with_a_control_character_is_a_400(api):
    token = await _token(api)
    # Found by the stateful run on POST /api/restify/users/{id}: a form part named 'g\x117...'.
    response = await api.post(f"{PREFIX}/posts", body=_part("g\x117", "x"), token=token,
                              headers={"Content-Type": "multipart/form-data; boundary=b0undary"})
    assert (response.status, response.json) == (400, INVALID_FORM)


@pytest.mark.parametrize("content_type", FORM_TYPES)
async def test_form_body_with_a_content_encoding_is_a_400(api, content_type):
    token = await _token(api)
    response = await api.post(f"{PREFIX}/posts", body=b"title=x", token=token,
                              headers={"Content-Type": content_type, "Content-Encoding": "gzip"})
    assert (response.status, response.json) == (400, INVALID_FORM)


async def test_well_formed_multipart_is_still_read(api):
    """The control for the findings above: the same route takes a proper form."""
    token = await _token(api)
    response = await api.post(f"{PREFIX}/posts", body=_part("title", "From a form"), token=token,
                              headers={"Content-Type": "multipart/form-data; boundary=b0undary"})
    assert response.status == 201, response.body
    assert response.json["data"]["attributes"]["title"] == "From a form"
