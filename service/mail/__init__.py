"""Mail: templates, the ways a message leaves (`mail.url`), the outbox and its sender.

Beneath the core, beside `storage`: it imports storage and the settings, nothing of the core, so the
core's operations queue messages (`enqueue`) and `restify serve` runs the sender (`run_sender`).
"""
from service.mail.sender import HOLDER, deliver, enqueue, retry_at, run_sender, wait_after
from service.mail.templates import Rendered, render
from service.mail.transport import Permanent, Transient

__all__ = ["HOLDER", "Permanent", "Rendered", "Transient", "deliver", "enqueue", "render", "retry_at", "run_sender",
           "wait_after"]
