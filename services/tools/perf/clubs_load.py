"""`stammtisch loadtest --clubs`: many players and clubs through the full stack, with a push gateway.

Bot clients (guests, one push token each) befriend their neighbours, found clubs of
``CLUB_SIZE`` members who join by code, chat, and invite others; every request, accept and
invitation is a notification pushed through the outbox to a recording HTTP gateway. Prints
requests/s per phase and overall, notifications/s delivered, and the outbox latency (from a
notification's creation to its arrival at the gateway) p50/p99. Asserts nothing.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from services.host.launch import launched_stack
from services.tools.perf.bench import STACK_ENV, cpu_seconds, ms, say
from services.tools.perf.push_gateway import Gateway, push_gateway
from services.tools.perf.stats import Samples
from shared.api.stammtisch.v1 import clubs_pb2
from shared.infra.local import local_servers
from shared.sdk.client import Endpoints, StammtischClient
from shared.sdk.clubs import call

CLUB_SIZE = 5
CHAT_LINES = 3
#: Calls in flight at once (as many phones would).
IN_FLIGHT = 64


async def _phase(title: str, calls: list[Callable[[], Awaitable[Any]]], latency: Samples) -> int:
    """Run the calls, IN_FLIGHT at a time; print requests/s; returns how many ran."""
    queue = list(calls)
    start = time.perf_counter()

    async def worker() -> None:
        while queue:
            one = queue.pop()
            began = time.perf_counter()
            await one()
            latency.add(time.perf_counter() - began)
    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
    elapsed = time.perf_counter() - start
    say(f"  {title}: {len(calls)} requests in {elapsed:.2f} s = {len(calls) / max(elapsed, 1e-9):,.0f}/s")
    return len(calls)


async def run(players: int, endpoints: Endpoints, gateway: Gateway, server_pid: int) -> None:
    """The phases, then the push figures."""
    clients = [StammtischClient(endpoints) for _ in range(players)]
    latency = Samples("request")
    cpu_before = cpu_seconds(server_pid)
    began = time.perf_counter()
    try:
        await asyncio.gather(*(client.login(f"p{index}") for index, client in enumerate(clients)))
        sent = await _phase("push tokens", [
            partial(call, c, "RegisterPushToken", platform=clubs_pb2.PUSH_PLATFORM_FCM,
                    token=f"token-{c.player_id}", app_id="de.example.load") for c in clients], latency)
        pairs = [(clients[i], clients[(i + 1) % players]) for i in range(players)]
        sent += await _phase("friend requests", [
            partial(call, a, "RequestFriend", player_id=b.player_id) for a, b in pairs], latency)
        sent += await _phase("friend accepts", [
            partial(call, b, "AnswerFriendRequest", player_id=a.player_id, accept=True) for a, b in pairs],
            latency)
        groups = [clients[i:i + CLUB_SIZE] for i in range(0, players - CLUB_SIZE + 1, CLUB_SIZE)]
        clubs: dict[int, Any] = {}

        async def found(owner: StammtischClient, index: int) -> None:
            clubs[index] = (await call(owner, "CreateClub", name=f"Club {index}",
                                       join_policy=clubs_pb2.CLUB_JOIN_POLICY_INVITATION)).club
        sent += await _phase("clubs created", [partial(found, g[0], i) for i, g in enumerate(groups)],
                             latency)
        sent += await _phase("joins by code", [
            partial(call, m, "JoinClub", code=clubs[i].code) for i, g in enumerate(groups) for m in g[1:]],
            latency)
        sent += await _phase("chat lines", [
            partial(call, m, "SendClubMessage", club_id=clubs[i].club_id, text=f"line {n}")
            for i, g in enumerate(groups) for m in g for n in range(CHAT_LINES)], latency)
        sent += await _phase("club invitations", [
            partial(call, g[0], "InviteToClub", club_id=clubs[i].club_id,
                    player_id=clients[(i * CLUB_SIZE + CLUB_SIZE) % players].player_id)
            for i, g in enumerate(groups)], latency)
        requests_done = time.perf_counter()
        expected = 2 * players + len(groups)  # requests, acceptances, invitations
        deadline = time.time() + 120
        while len(gateway.received) < expected and time.time() < deadline:
            await asyncio.sleep(0.2)
        done = time.perf_counter()
    finally:
        await asyncio.gather(*(client.close() for client in clients))
    cpu_after = cpu_seconds(server_pid)
    with gateway.lock:
        pushes = list(gateway.received)
    outbox = Samples("created -> at the gateway")
    for body in pushes:
        outbox.add(body["received_at"] - body["created_at"])
    first = min((body["created_at"] for body in pushes), default=0.0)
    last = max((body["received_at"] for body in pushes), default=0.0)
    say(f"players {players}, clubs {len(groups)} of {CLUB_SIZE}")
    say(f"  all requests: {sent} in {requests_done - began:.1f} s = "
        f"{sent / max(requests_done - began, 1e-9):,.0f}/s; request p50 / p99: {ms(latency)}")
    say(f"  pushes delivered: {len(pushes)} of {expected} expected, "
        f"{len(pushes) / max(last - first, 1e-9):,.0f} notifications/s (first created to last delivered "
        f"{last - first:.1f} s); all delivered {done - requests_done:.1f} s after the last request")
    say(f"  outbox latency p50 / p99: {ms(outbox)}")
    duplicates = len(pushes) - len({body["idempotency_key"] for body in pushes})
    say(f"  repeated idempotency keys at the gateway: {duplicates}")
    if cpu_before is not None and cpu_after is not None:
        say(f"  server process CPU {cpu_after - cpu_before:.1f} s over {done - began:.1f} s")


def main(players: int) -> int:
    """Start servers, a gateway and a child stack; run the phases; stop everything."""
    with tempfile.TemporaryDirectory(prefix="stammtisch-clubs-load-") as raw, \
            local_servers(Path(raw) / "servers") as (redis_url, nats_url), push_gateway() as gateway:
        env = {**STACK_ENV, "REDIS_URL": redis_url, "NATS_URL": nats_url,
               "STAMMTISCH_KEY_PREFIX": f"cl{uuid.uuid4().hex[:8]}",
               "STAMMTISCH_PUSH_GATEWAY_URL": gateway.url}
        with launched_stack(env, Path(raw) / "stack") as stack:
            asyncio.run(run(players, Endpoints.of(stack.endpoints), gateway, stack.process.pid))
    return 0
