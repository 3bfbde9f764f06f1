"""Concurrency without loss: many clients over REST, GraphQL and MCP at once, then invariants in the database.

The workload, the ledger of what the clients saw acknowledged and the invariant checks are
`bench/soak.py`'s (the same code runs longer there, against `restify serve`). Here it runs
against the in-process test server and the embedded database:

- the main test drives 16 workers through every operation at once (both file disks),
  racing uploads and deletes included, and asserts every invariant;
- the contest tests assert exact outcomes: exactly one winner among same-value creates,
  renames, and racing deletes;
- the file-race tests check each file invariant after every round of racing uploads, deletes
  and reads.
"""
import asyncio
import time
import warnings
from pathlib import Path

import pytest

from bench.soak import MCP_PRESENT, PREFIX, Doors, Invariant, Workload, check, report

try:
    from service.mcp import endpoints
except ImportError:  # the MCP door is optional here: the workload leaves it out and says so
    def endpoints(app):
        return []

RENAME_TAG = "mutation($id: ID!, $input: TagInput!) { updateTag(id: $id, input: $input) { id name } }"
WORKERS = 16
STEPS = 30          # per worker: about 500 operations, 3-6 s on the embedded database


@pytest.fixture
def config(config, request):
    config["files"]["disk"] = getattr(request, "param", "local")
    return config


@pytest.fixture
def doors(api, app, io_loop):
    doors = Doors(api.client.get_url(""), concurrency=4 * WORKERS)
    yield doors
    doors.close()
    for endpoint in endpoints(app):  # the MCP session manager must stop on the loop it runs on
        io_loop.run_sync(endpoint.close)


async def verify(workload: Workload, db, restify) -> dict[str, Invariant]:
    files_root = Path(restify.settings.get("files", "root"))
    invariants = await check(workload.ledger, db, files_root, restify.settings.get("files", "disk"))
    return {invariant.key: invariant for invariant in invariants}


def failures(invariants: dict[str, Invariant], *keys: str) -> str:
    """The failed invariants among `keys` (all when none are named), with their first problems."""
    chosen = [invariants[k] for k in keys] if keys else list(invariants.values())
    return "\n".join(f"{i.name}:\n  " + "\n  ".join(i.problems[:10]) for i in chosen if not i.ok)


async def assert_invariants_hold(workload: Workload, db, restify) -> None:
    problems = failures(await verify(workload, db, restify))
    assert not problems, problems


async def started(doors: Doors, users: int = 2) -> Workload:
    workload = Workload(doors, users=users, hot_posts=1)
    await workload.setup()
    return workload


# -- the mixed workload ---------------------------------------------------------------------------------
@pytest.mark.parametrize("config", ["local", "gridfs"], indirect=True)
async def test_many_clients_over_rest_graphql_and_mcp_lose_nothing(doors, db, restify, config):
    workload = Workload(doors, users=4)
    await workload.setup()
    if workload.mcp_note:
        warnings.warn(workload.mcp_note, stacklevel=1)
    begun = time.monotonic()
    await workload.run(WORKERS, steps=STEPS)
    invariants = await verify(workload, db, restify)
    report(workload.ledger, list(invariants.values()), time.monotonic() - begun)  # shown with -s or on failure

    assert not failures(invariants), failures(invariants)

    ledger = workload.ledger
    assert workload.door_choices == (("rest", "graphql", "mcp") if MCP_PRESENT else ("rest", "graphql"))
    for door in workload.door_choices:
        assert ledger.ops[("post.store", door, "acked")] > 0, f"no post was stored through {door}"
    kinds = {kind for kind, _, _ in ledger.ops}
    assert {"post.store", "post.update", "post.delete", "post.foreign-update", "read.show", "read.index", "tag.store",
            "tag.bulk", "tags.attach", "register", "upload.cover", "upload.avatar"} <= {k.rsplit(".", 1)[0] if k.endswith(
                (".put", ".patch")) else k for k in kinds}
    assert {"tag", "register"} <= {what for what, _, _, _ in ledger.bursts}
    assert sum(n for (kind, _, outcome), n in ledger.ops.items() if kind.endswith(".bad") and outcome == "refused")
    assert sum(ledger.ops.values()) >= WORKERS * STEPS
    assert sum(acked for sent in ledger.attaches.values() for acked in sent.values()) > 0


# -- contests with one right answer -----------------------------------------------------------------------
async def test_exactly_one_of_many_same_name_tag_creates_succeeds_on_every_door(doors, db):
    workload = await started(doors)
    names = [workload.unique("tag") for _ in range(3)]
    creates = [workload.create_tag(workload.accounts[i % 2], name, door)
               for name in names for i, door in enumerate(workload.door_choices * 4)]
    answers = await asyncio.gather(*creates)
    per_name = len(answers) // len(names)
    for index, name in enumerate(names):
        mine = answers[index * per_name:(index + 1) * per_name]
        assert sum(a.ok for a in mine) == 1, [(a.door, a.status, a.reason) for a in mine]
        refused = [a for a in mine if not a.ok]
        assert {a.status for a in refused} == {422}
        assert all(a.errors == {"name": ["The name has already been taken."]} for a in refused)
        stored = await db.collection("tags").find_within("name", [name])
        assert [t["id"] for t in stored] == workload.ledger.tags[name]


async def test_parallel_bulk_stores_with_conflicts_each_write_all_their_items_or_none(doors, db, restify):
    workload = await started(doors)
    pool = [workload.unique("bulk") for _ in range(6)]
    # Overlapping names across requests, and a repeated name inside some (refused after a partial write).
    # Overlapping requests may all be refused (each meets another's items, written and then taken back);
    # the last two, with names of their own, must be written whole whatever the others do.
    batches = [[pool[(i + k) % 6] for k in range(3)] for i in range(6)]
    batches += [[pool[i], pool[i + 1], pool[i]] for i in range(3)]
    batches += [[workload.unique("own"), workload.unique("own")] for _ in range(2)]
    answers = await asyncio.gather(*(workload.create_tags(workload.accounts[i % 2], names, ("rest", "graphql")[i % 2])
                                     for i, names in enumerate(batches)))
    assert all(a.status in (201, 200, 422) for a in answers), [(a.door, a.status, a.reason) for a in answers]
    assert all(a.ok for a in answers[-2:]), [(a.door, a.status, a.reason) for a in answers[-2:]]
    assert not any(a.ok for a, names in zip(answers, batches, strict=True) if len(set(names)) < len(names))
    stored = await db.collection("tags").find_within("name", [name for names in batches for name in names])
    acked = [names for a, names in zip(answers, batches, strict=True) if a.ok]
    assert sorted(t["name"] for t in stored) == sorted(name for names in acked for name in names)
    await assert_invariants_hold(workload, db, restify)


async def test_exactly_one_of_many_same_email_registrations_succeeds(doors, db, restify):
    workload = await started(doors)
    for _ in range(3):
        await workload.register_burst()
    assert [acked for _, _, acked, _ in workload.ledger.bursts] == [1, 1, 1]
    await assert_invariants_hold(workload, db, restify)  # one user and one token per winner, none for losers


async def test_exactly_one_of_many_changes_to_the_same_unique_value_succeeds(doors, db):
    workload = await started(doors, users=6)
    email = workload.unique("taken") + "@example.com"
    answers = await asyncio.gather(*(doors.rest("PUT", f"{PREFIX}/profile", account.token,
                                                {"name": account.name, "email": email,
                                                 "current_password": "secret-pass"})
                                     for account in workload.accounts))
    assert sorted(a.status for a in answers) == [200] + [422] * 5
    assert all(a.errors == {"email": ["The email has already been taken."]} for a in answers if not a.ok)
    winner = workload.accounts[[a.ok for a in answers].index(True)]
    assert [u["id"] for u in await db.collection("users").find_within("email", [email])] == [winner.id]

    token = workload.accounts[0].token
    tags = [(await workload.create_tag(workload.accounts[0], workload.unique("tag"), "rest")).body["data"]["id"]
            for _ in range(6)]
    name = workload.unique("renamed")
    renames = [doors.graphql(RENAME_TAG, {"id": tag, "input": {"name": name}}, token) for tag in tags[:3]]
    renames += [doors.rest("PATCH", f"{PREFIX}/tags/{tag}", token, {"name": name}) for tag in tags[3:]]
    answers = await asyncio.gather(*renames)
    assert sorted(a.status for a in answers) == [200] + [422] * 5, [(a.door, a.status, a.reason) for a in answers]
    assert all(a.errors == {"name": ["The name has already been taken."]} for a in answers if not a.ok)
    assert len(await db.collection("tags").find_within("name", [name])) == 1
    assert len(await db.collection("tags").find_within("id", tags)) == 6


async def test_racing_deletes_acknowledge_one_and_racing_updates_lose_nothing(doors, db, restify):
    workload = await started(doors)
    account = workload.accounts[0]
    victims = [await workload.create_post(account, door) for door in workload.door_choices]
    assert None not in victims
    races = []
    for victim in victims:
        races += [workload.delete_post(account, victim, door) for door in workload.door_choices * 2]
        races += [workload.update_post(account, victim, door) for door in workload.door_choices * 2]
    await asyncio.gather(*races)
    for victim in victims:
        assert sum(d.acked for d in workload.ledger.posts[victim].deletes) == 1
        assert await db.collection("posts").find_by_id(victim) is None
    await assert_invariants_hold(workload, db, restify)


async def test_refused_uploads_racing_good_ones_leave_nothing_behind(doors, db, restify):
    workload = await started(doors)
    account = workload.accounts[0]
    post = account.hot[0]
    for _ in range(2):  # before and after the record has a file
        answers = await asyncio.gather(*([workload.upload_avatar(account)]
                                         + [workload.upload_avatar(account, bad=True) for _ in range(4)]
                                         + [workload.upload_cover(account, post)]
                                         + [workload.upload_cover(account, post, bad=True) for _ in range(4)]))
        assert [a.status for a in answers] == [200] + [422] * 4 + [200] + [422] * 4
    await assert_invariants_hold(workload, db, restify)


# -- file races ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("config", ["local", "gridfs"], indirect=True)
async def test_racing_avatar_uploads_leave_exactly_one_file(doors, db, restify, config):
    workload = await started(doors)
    account = workload.accounts[0]
    problems = []
    for _ in range(5):  # checked after every round: the window is one request wide
        answers = await asyncio.gather(*(workload.upload_avatar(account, kind=("png", "gif")[i % 2])
                                         for i in range(6)))
        assert all(a.ok for a in answers), [(a.status, a.reason) for a in answers]
        problems.append(failures(await verify(workload, db, restify)))
    assert not any(problems), "\n".join(problems)


@pytest.mark.parametrize("config", ["local", "gridfs"], indirect=True)
async def test_deleting_a_post_deletes_its_cover_on_every_door(doors, db, restify, config):
    workload = await started(doors)
    account = workload.accounts[0]
    for door in workload.door_choices:
        post = await workload.create_post(account, door)
        assert (await workload.upload_cover(account, post)).ok
        assert (await workload.delete_post(account, post, door)).ok
    await assert_invariants_hold(workload, db, restify)


@pytest.mark.parametrize("config", ["local", "gridfs"], indirect=True)
async def test_reading_a_file_while_it_is_replaced_answers_200_or_404(doors, db, restify, config):
    workload = await started(doors)
    account = workload.accounts[0]
    post = account.hot[0]
    seen: list[int] = []
    replacing = True

    async def reader(newest: int) -> None:
        nonlocal replacing
        while replacing:
            url = list(workload.ledger.urls)[-newest]  # the current cover, or the one it replaced
            status, _ = await doors.fetch("GET", url, None, {})
            seen.append(status)
            replacing = replacing and status < 500  # one server error is enough
            await asyncio.sleep(0)

    async def writer() -> None:
        nonlocal replacing
        for i in range(40):  # one at a time: each replaces (and deletes) the other extension's file
            if not replacing:
                break
            await workload.upload_cover(account, post, kind=("png", "gif")[i % 2])
        replacing = False

    for kind in ("png", "gif"):
        assert (await workload.upload_cover(account, post, kind=kind)).ok
    await asyncio.gather(writer(), *(reader(newest) for newest in (1, 2) for _ in range(12)))
    assert set(seen) <= {200, 404}, sorted(set(seen))
    await assert_invariants_hold(workload, db, restify)


async def test_an_acknowledged_update_answers_with_the_values_it_wrote(doors, db, restify):
    workload = await started(doors)
    account = workload.accounts[0]
    post = account.hot[0]
    await asyncio.gather(*(workload.update_post(account, post, door) for door in workload.door_choices * 6))
    await assert_invariants_hold(workload, db, restify)


# -- known bugs: the correct behaviour, asserted; strict, so a fix shows up as XPASS ------------------------
async def test_a_delete_racing_an_upload_to_the_same_post_leaves_no_orphaned_file(doors, db, restify):
    workload = await started(doors)
    account = workload.accounts[0]
    for door in workload.door_choices * 4:
        victim = await workload.create_post(account, "rest")
        await workload.upload_cover(account, victim, kind="png")
        await asyncio.gather(workload.upload_cover(account, victim, kind="gif"),
                             workload.delete_post(account, victim, door))
    await assert_invariants_hold(workload, db, restify)


@pytest.mark.parametrize("config", ["local", "gridfs"], indirect=True)
async def test_racing_cover_uploads_leave_exactly_one_file(doors, db, restify, config):
    workload = await started(doors)
    account = workload.accounts[0]
    post = account.hot[0]
    problems = []
    for _ in range(5):
        await asyncio.gather(*(workload.upload_cover(account, post, kind=("png", "gif")[i % 2]) for i in range(8)))
        problems.append(failures(await verify(workload, db, restify), "files", "5xx"))
    assert not any(problems), "\n".join(problems)
