"""A recording push gateway for tests and `stammtisch loadtest --clubs`: a real HTTP server on
a free loopback port that keeps each POST (with its Idempotency-Key and when it arrived).
``fail_next`` makes the next N requests answer 503, to see the outbox retry."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Gateway:
    """What the gateway received (each JSON body with its Idempotency-Key) and its URL."""

    url: str = ""
    received: list[dict[str, Any]] = field(default_factory=list)
    fail_next: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of_kind(self, kind: str, token: str | None = None) -> list[dict[str, Any]]:
        """The deliveries of one kind (to one device token)."""
        with self.lock:
            return [body for body in self.received
                    if body["kind"] == kind and token in (None, body["token"])]


@contextmanager
def push_gateway() -> Iterator[Gateway]:
    """Serve a recording gateway until the block ends."""
    gateway = Gateway()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with gateway.lock:
                failing = gateway.fail_next > 0
                if failing:
                    gateway.fail_next -= 1
                else:
                    gateway.received.append({**body, "idempotency_key": self.headers["Idempotency-Key"],
                                             "received_at": time.time()})
            self.send_response(503 if failing else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args: object) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    gateway.url = f"http://127.0.0.1:{server.server_port}/push"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield gateway
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
