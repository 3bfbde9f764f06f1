"""Before measuring: both servers must answer each case alike (same records, same related
counts), or the ratio would compare different work."""
import json
import urllib.error
import urllib.request
from typing import Any

# (name, method, path, body, headers, bare request or None): see bench.run._cases.
Case = tuple[str, str, str, bytes, dict[str, str], tuple[str, str, bytes, dict[str, str]] | None]


def fetch(host: str, port: int, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(f"http://{host}:{port}{path}", data=body or None, method=method,
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, None


def _shape(body: Any) -> Any:
    """Record ids (an aggregation's groups, whole) and, per record, how many related items each relation holds."""
    data = body["data"]
    items = data if isinstance(data, list) else [data]
    # An aggregation's group has no id: it is compared whole.
    return [(item["id"] if "id" in item else json.dumps(item, sort_keys=True),
             {name: len(related) for name, related in sorted(item.get("relationships", {}).items())})
            for item in items]


def check_parity(host: str, service_port: int, bare_port: int, cases: list[Case]) -> None:
    for name, method, path, body, headers, bare_request in cases:
        service_status, service_body = fetch(host, service_port, method, path, body, headers)
        if bare_request is not None:  # GraphQL against the REST request doing the same database work
            bare_status, bare_body = fetch(host, bare_port, *bare_request)
            _check_graphql(name, service_status, service_body, bare_body)
            continue
        bare_status, bare_body = fetch(host, bare_port, method, path, body, headers)
        if service_status != bare_status or service_status not in (200, 201):
            raise RuntimeError(f"{name}: service answered {service_status}, bare {bare_status}")
        if method == "GET" and _shape(service_body) != _shape(bare_body):
            raise RuntimeError(f"{name}: service and bare return different records:\n"
                               f"  service {_shape(service_body)}\n  bare    {_shape(bare_body)}")
        if method == "GET":
            shape = _shape(service_body)
            related = {k: sum(r[k] for _, r in shape) for k in (shape[0][1] if shape else {})}
            print(f"  parity ok: {name}: {len(shape)} record(s), related {related or '-'}", flush=True)
        else:
            print(f"  parity ok: {name}: {service_status}", flush=True)


def _check_graphql(name: str, status: int, body: Any, bare_body: Any) -> None:
    if status != 200 or not body or body.get("errors"):
        raise RuntimeError(f"{name}: GraphQL answered {status}: {body}")
    data = next(iter(body["data"].values()))
    bare = bare_body["data"]
    if isinstance(bare, list):
        if [item["id"] for item in data] != [item["id"] for item in bare]:
            raise RuntimeError(f"{name}: GraphQL and bare return different records")
    else:
        related = {k: len(v) for k, v in bare.get("relationships", {}).items()}
        if data["id"] != bare["id"] or {k: len(data[k]) for k in related} != related:
            raise RuntimeError(f"{name}: GraphQL and bare load different related records")
    print(f"  parity ok: {name}", flush=True)
