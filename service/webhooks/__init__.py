"""Webhooks: a repository's changes POSTed to other systems, signed, at least once and in order per record.

Above the core, beside the doors: it reads records by the core's rules (visibility, presenting) and
keeps its deliveries in storage; `restify serve` runs the senders (`run_webhooks`), the console lists
and replays failed deliveries. Declared with `service.Webhook` (service/core/declarations/webhooks.py).
"""
from service.webhooks.capture import capture, context_of, delivery_id
from service.webhooks.sender import body_of, declared, deliver, place, run_webhooks, signature

__all__ = ["body_of", "capture", "context_of", "declared", "deliver", "delivery_id", "place", "run_webhooks",
           "signature"]
