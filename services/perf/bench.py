"""`stammtisch bench` (`make bench`): the rules engines, the bare parts, and the arbiter under load.

The servers run as a child process (`stammtisch up`) against a Redis and a
NATS this run starts in a temporary folder; the bot clients run here. So the
arbiter figures cross real process boundaries, and the bare costs next to them
are measured on the same machine in the same run.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from services.launch import launched_stack
from services.perf import bare, engines
from services.perf.arbiter import SEATS, run_tables
from shared.localinfra import local_servers
from shared.sdk.client import Endpoints


@dataclass(frozen=True)
class Step:
    """Tables at once, calls per seat and a time cap for one arbiter step."""

    tables: int
    actions_per_seat: int
    seconds: float


#: Bounded so that the whole step takes well under a few minutes on 2 cores.
STEPS = (Step(1, 300, 30.0), Step(10, 150, 45.0), Step(100, 40, 90.0))
BARE_CALLS = 2000
ENGINE_SECONDS = 2.0
#: The stack for the arbiter steps: rate limits out of the way, quiet logs (a full stderr pipe
#: would stall the child), server bots never involved.
STACK_ENV = {"STAMMTISCH_ACTIONS_PER_SECOND": "1000000", "STAMMTISCH_LOG_LEVEL": "error",
             "STAMMTISCH_LOG_FORMAT": "json"}


def say(line: str = "") -> None:
    """Print at once (the run is long; show progress)."""
    print(line, flush=True)


async def bare_costs(endpoints: dict[str, str], redis_url: str, nats_url: str) -> None:
    """The parts without any Stammtisch logic, against the same servers."""
    say(f"Bare costs (same machine, same run; {BARE_CALLS} calls each)")
    for samples in (await bare.grpc_empty_call(endpoints["arbiter"], BARE_CALLS),
                    await bare.redis_round_trip(redis_url, BARE_CALLS),
                    await bare.nats_publish(nats_url, BARE_CALLS)):
        say(samples.line())


async def arbiter_steps(endpoints: dict[str, str], steps: Sequence[Step]) -> None:
    """Each step: fresh tables through the lobby, then every seat plays as fast as it can."""
    say(f"Arbiter: Wie Waldi tables of {SEATS} heuristic bot clients, as fast as they can "
        "(clients in this process, servers in the child)")
    targets = Endpoints(endpoints["lobby"], endpoints["engine"], endpoints["arbiter"],
                        endpoints["scoring"])
    for step in steps:
        say(f" step: {step.tables} concurrent tables, at most {step.actions_per_seat} calls per seat "
            f"or {step.seconds:.0f} s")
        run = await run_tables(targets, step.tables, step.actions_per_seat, step.seconds)
        for line in run.lines():
            say(line)


async def service_figures(redis_url: str, nats_url: str, data_dir: Path) -> None:
    """Start the stack as a child process and measure through it."""
    env = {**STACK_ENV, "REDIS_URL": redis_url, "NATS_URL": nats_url}
    with launched_stack(env, data_dir / "stack") as stack:
        await bare_costs(stack.endpoints, redis_url, nats_url)
        say()
        await arbiter_steps(stack.endpoints, STEPS)


def main() -> int:
    """Print every figure of one run."""
    started = time.perf_counter()
    say(f"Stammtisch bench on {os.cpu_count()} CPU(s)")
    say()
    for line in engines.report(ENGINE_SECONDS):
        say(line)
    say()
    with tempfile.TemporaryDirectory(prefix="stammtisch-bench-") as raw, \
            local_servers(Path(raw) / "servers") as (redis_url, nats_url):
        asyncio.run(service_figures(redis_url, nats_url, Path(raw)))
    say()
    say(f"bench finished in {time.perf_counter() - started:.0f} s")
    return 0
