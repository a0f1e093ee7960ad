"""The seeded kill schedule: which process dies when, and how long it stays down.

The first kills take every kind once (in a seeded order), so even a short run
kills a lobby, an engine and an arbiter replica, scoring, Redis and NATS; the
rest are drawn at random. One seed gives the same plan every time.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field

from services.tools.chaos.cluster import Cluster, Member
from shared.obs.logs import get_logger

log = get_logger("chaos.schedule")

KINDS = ("lobby", "engine", "arbiter", "scoring", "redis", "nats")


@dataclass(frozen=True)
class Kill:
    """One planned kill: the member, the pause before it, and how long it stays down."""

    name: str
    wait_seconds: float
    down_seconds: float


def kill_plan(cluster: Cluster, kills: int, seed: int, interval: float) -> list[Kill]:
    """``kills`` kills, every kind within the first six, gaps around ``interval`` seconds."""
    rng = random.Random(seed)
    kinds = list(KINDS)
    rng.shuffle(kinds)
    kinds += [rng.choice(KINDS) for _ in range(max(0, kills - len(kinds)))]
    return [Kill(rng.choice(cluster.of_kind(kind)).name, rng.uniform(0.5, 1.5) * interval,
                 rng.uniform(0.2, 3.0))
            for kind in kinds[:kills]]


@dataclass
class KillLog:
    """What the schedule did: kills by kind, when (monotonic), and restart times."""

    by_kind: Counter[str] = field(default_factory=Counter)
    at: list[tuple[float, str]] = field(default_factory=list)
    #: Seconds from a restart until the member served again, by kind.
    restart_seconds: dict[str, list[float]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def last_before(self, moment: float) -> tuple[str, float]:
        """The member killed most recently before ``moment``, and when ("", 0.0 if none)."""
        earlier = [(name, at) for at, name in self.at if at <= moment]
        return earlier[-1] if earlier else ("", 0.0)


async def run_schedule(cluster: Cluster, plan: list[Kill], done: KillLog) -> None:
    """Carry out the plan: wait, SIGKILL, stay down, start again on the same port and data."""
    members: dict[str, Member] = {m.name: m for m in cluster.members}
    for kill in plan:
        await asyncio.sleep(kill.wait_seconds)
        member = members[kill.name]
        member.kill()
        done.at.append((time.monotonic(), member.name))
        done.by_kind[member.kind] += 1
        log.info("killed", member=member.name, down_seconds=round(kill.down_seconds, 2))
        await asyncio.sleep(kill.down_seconds)
        try:
            done.restart_seconds.setdefault(member.kind, []).append(await cluster.restart(member))
        except RuntimeError as err:
            done.failures.append(str(err))
            return
