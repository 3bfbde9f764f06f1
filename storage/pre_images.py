"""Pre-images this process's writes hand to its change-stream watchers.

A live feed judges an update on the record as it was before (did it leave, or enter, someone's
view?). MongoDB 6.0+ gives that image in the change event itself (`fullDocumentBeforeChange`, once
`changeStreamPreAndPostImages` is enabled on the collection); the embedded server never does. But
an update made by `Collection.swap` reads the document it replaces in the same atomic step: it
hands that image here, keyed by the record and the version the write left, and the watcher of
the collection attaches it to the change that write caused.

A slot is opened before the write is sent, so a watcher that reads the change before the writer
has resumed waits for the image (the write is in flight, it ends in one round trip). A write
made by another process hands nothing here: its change has no pre-image on the embedded server.
Only collections someone watches in this process keep slots.

Every write of this process also ends its watcher's rest between empty reads (`wrote`): the
embedded server answers an idle read at once, so the watcher pauses between reads (`live.idle_ms`),
and a change this process made goes out without waiting for that pause to end.
"""
import asyncio
from typing import Any

VERSION = "_version"
_MAX_PER_RECORD = 32      # slots of writes whose change has not arrived yet, per record
_WAIT_SECONDS = 5.0       # a write in flight longer than this has failed or hangs: no image


class _Slot:
    def __init__(self, siblings: list["_Slot"]) -> None:
        self.settled = asyncio.get_running_loop().create_future()
        self._siblings = siblings

    def settle(self, before: dict | None, after: dict | None) -> None:
        """What the write replaced and left (None, None: it wrote nothing, and its slot goes)."""
        if self.settled.done():
            return
        if before is None or after is None:
            self.settled.set_result(None)
            if self in self._siblings:
                self._siblings.remove(self)
        else:
            self.settled.set_result((after.get(VERSION), before))


class PreImages:
    """The slots of one collection in this process, and the watcher's rest between reads."""

    def __init__(self) -> None:
        self.watched = False
        self._slots: dict[str, list[_Slot]] = {}
        self._wrote = False
        self._resting: asyncio.Future[None] | None = None

    def wrote(self) -> None:
        """A write of this process ended: a watcher resting between empty reads reads again now, so
        its change goes out without waiting for the rest to end."""
        self._wrote = True
        if self._resting is not None and not self._resting.done():
            self._resting.set_result(None)

    async def rest(self, seconds: float) -> None:
        """The watcher's pause after an empty read: `seconds`, or until a write of this process ends
        (one that ended since the read began ends it at once)."""
        if not self._wrote:
            loop = asyncio.get_running_loop()
            resting = self._resting = loop.create_future()
            timer = loop.call_later(seconds, _wake, resting)
            try:
                await resting
            finally:
                timer.cancel()
                self._resting = None
        self._wrote = False

    def reading(self) -> None:
        """The watcher reads now: what was written before this is in what it reads."""
        self._wrote = False

    def expect(self, id: str) -> _Slot | None:
        """A slot for a write of record `id` about to be sent; None when nobody watches."""
        if not self.watched:
            return None
        slots = self._slots.setdefault(id, [])
        if len(slots) >= _MAX_PER_RECORD:
            slots.pop(0)
        slot = _Slot(slots)
        slots.append(slot)
        return slot

    async def take(self, id: str, document: dict | None) -> dict | None:
        """The image a write of this process replaced to leave `document` (an update's change),
        else None. Slots of that write and earlier ones are used up."""
        slots = self._slots.get(id)
        if not slots or document is None:
            return None
        version, found = document.get(VERSION), None
        try:
            await asyncio.wait_for(asyncio.gather(*(asyncio.shield(s.settled) for s in slots)), _WAIT_SECONDS)
        except asyncio.TimeoutError:
            pass
        for index, slot in enumerate(list(slots)):
            result = slot.settled.result() if slot.settled.done() else None
            if result is not None and result[0] == version:
                found = result[1]
                del slots[:index + 1]
                break
        if not slots:
            self._slots.pop(id, None)
        return found

    def clear(self) -> None:
        self.watched = False
        self._slots.clear()


def _wake(resting: "asyncio.Future[None]") -> None:
    if not resting.done():
        resting.set_result(None)


_REGISTRY: dict[tuple[str, str], PreImages] = {}


def pre_images(database: str, collection: str) -> PreImages:
    """The slots of `collection` in `database` for this process (every `Database` object shares them)."""
    key = (database, collection)
    if key not in _REGISTRY:
        _REGISTRY[key] = PreImages()
    return _REGISTRY[key]


def settle(slot: _Slot | None, swapped: Any) -> None:
    if slot is not None:
        before, after = swapped if swapped else (None, None)
        slot.settle(before, after)
