"""The push outbox in Redis: a job claimed by a replica that dies before delivering goes out from
another once the lease passes, exactly once; a newer job of the same collapse key replaces a
pending one; quiet hours hold a job until they end."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from services.clubs.inbox import Inbox
from services.clubs.keys import Keys
from services.clubs.push import Devices, Outbox, Preferences
from services.tools.perf.push_gateway import Gateway, push_gateway
from shared.api.stammtisch.v1 import clubs_pb2 as K
from shared.ids import new_player_id
from shared.infra.runtime import Runtime

pytestmark = pytest.mark.integration
LEASE = 0.5


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    with push_gateway() as gw:
        yield gw


async def player_with_phone(devices: Devices) -> str:
    player = new_player_id()
    await devices.register(player, "fcm", f"token-{player}", "de.example.app")
    return player


async def test_a_job_of_a_replica_killed_mid_delivery_goes_out_once_from_another(
        runtime: Runtime, gateway: Gateway) -> None:
    keys = Keys(runtime)
    devices = Devices(keys)
    dead, alive = (Outbox(keys, devices, gateway.url, lease_seconds=LEASE) for _ in range(2))
    player = await player_with_phone(devices)
    note = await Inbox(keys, dead).add(player, K.NOTIFICATION_KIND_FRIEND_REQUEST, "Anna asks")
    (claimed,) = await dead.claim(keys.shard_of(player))  # ... and the replica dies here
    assert claimed.notification_id == note.notification_id
    assert await alive.deliver_once() == 0  # leased: not yet
    await asyncio.sleep(LEASE + 0.1)
    assert await alive.deliver_once() == 1
    assert await alive.deliver_once() == 0
    assert [body["notification_id"] for body in gateway.received] == [note.notification_id]
    assert await alive.depth() == 0
    assert (await alive.delivered(player))[0]["outcome"] == "delivered"


async def test_a_newer_job_of_the_same_collapse_key_replaces_a_pending_one(
        runtime: Runtime, gateway: Gateway) -> None:
    keys = Keys(runtime)
    devices = Devices(keys)
    outbox = Outbox(keys, devices, gateway.url)
    player = await player_with_phone(devices)
    inbox = Inbox(keys, outbox)
    await inbox.add(player, K.NOTIFICATION_KIND_YOUR_TURN, "first", collapse_key="turn:t1", table_id="t1")
    newest = await inbox.add(player, K.NOTIFICATION_KIND_TIME_ALMOST_UP, "second", collapse_key="turn:t1",
                             table_id="t1")
    assert await outbox.deliver_once() == 2
    assert [body["notification_id"] for body in gateway.received] == [newest.notification_id]
    assert [r["outcome"] for r in await outbox.delivered(player)] in (["collapsed", "delivered"],
                                                                      ["delivered", "collapsed"])


async def test_quiet_hours_hold_a_push_until_they_end(runtime: Runtime, gateway: Gateway) -> None:
    keys = Keys(runtime)
    devices = Devices(keys)
    outbox = Outbox(keys, devices, gateway.url)
    player = await player_with_phone(devices)
    now = time.gmtime()
    minute = now.tm_hour * 60 + now.tm_min
    await devices.set_preferences(player, Preferences((), minute, (minute + 60) % 1440, "UTC"))
    await Inbox(keys, outbox).add(player, K.NOTIFICATION_KIND_CLUB_INVITATION, "join us")
    assert await outbox.deliver_once() == 0 and await outbox.depth() == 1
    assert Preferences((), minute, (minute + 60) % 1440, "").quiet_until(time.time()) > time.time() + 3500
    assert Preferences((), 0, 0, "").quiet_until(123.0) == 123.0
