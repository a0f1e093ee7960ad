"""Publishing to JetStream through a cluster's short outages.

When the server leading a replicated stream dies, the others elect a new
leader within a few seconds; until then a publish gets no answer. A message
with a ``Nats-Msg-Id`` can simply be sent again: if the first try was stored
after all, JetStream drops the repeat as a duplicate.
"""

from __future__ import annotations

import asyncio
import time

from nats.errors import Error as NatsError
from nats.js import JetStreamContext
from nats.js.api import PubAck

#: How long a publish is retried: a stream leader election takes about 2-3 s.
RETRY_SECONDS = 10.0


async def publish_deduplicated(js: JetStreamContext, subject: str, data: bytes, msg_id: str,
                               retry_seconds: float = RETRY_SECONDS) -> PubAck:
    """Publish with ``Nats-Msg-Id = msg_id``, retried while JetStream does not answer."""
    deadline = time.monotonic() + retry_seconds
    pause = 0.1
    while True:
        try:
            return await js.publish(subject, data, headers={"Nats-Msg-Id": msg_id})
        except NatsError:
            if time.monotonic() + pause > deadline:
                raise
            await asyncio.sleep(pause)
            pause = min(1.0, pause * 2)
