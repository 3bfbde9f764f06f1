"""A test helper: the commands the driver sends, counted to prove batched loading."""
from pymongo import monitoring


class CommandCounter(monitoring.CommandListener):
    """Counts the commands sent to the server, by name: used to prove batched loading."""

    def __init__(self) -> None:
        self.commands: list[tuple[str, str]] = []
        self.sent: list[dict] = []  # the commands themselves, to look at their shapes

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        collection = event.command.get(event.command_name)
        self.commands.append((event.command_name, collection if isinstance(collection, str) else ""))
        self.sent.append(dict(event.command))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass

    def reset(self) -> None:
        self.commands.clear()
        self.sent.clear()

    def reads(self) -> list[tuple[str, str]]:
        return [c for c in self.commands if c[0] in ("find", "aggregate", "count", "getMore")]
