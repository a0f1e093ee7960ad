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

from services.launch import LaunchedStack, launched_stack
from services.perf import bare, engines
from services.perf.arbiter import SEATS, TablesRun, play_tables, seated_tables
from shared.localinfra import local_servers
from shared.sdk.client import Endpoints


@dataclass(frozen=True)
class Step:
    """Tables at once, calls per seat and a time cap for one arbiter step."""

    tables: int
    actions_per_seat: int
    seconds: float


#: Bounded in calls and time: the 100-table step takes well under two minutes on 2 cores.
STEPS = (Step(1, 200, 30.0), Step(10, 60, 45.0), Step(100, 15, 90.0))
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


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far (Linux /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_line(who: str, seconds: float | None, run: TablesRun) -> str:
    """CPU a process spent on a step: share of one core and per applied action."""
    if seconds is None:
        return f"  {who}: CPU time not available on this system"
    per_action = seconds / run.applied * 1e3 if run.applied else 0.0
    return (f"  {who:<44} CPU {seconds:6.1f} s = {seconds / run.seconds:4.0%} of a core, "
            f"{per_action:5.2f} ms per applied action")


async def arbiter_steps(stack: LaunchedStack, steps: Sequence[Step]) -> None:
    """Each step: fresh tables through the lobby, then every seat plays as fast as it can."""
    say(f"Arbiter: Wie Waldi tables of {SEATS} heuristic bot clients, as fast as they can "
        "(clients in this process, all four services in the child)")
    endpoints = stack.endpoints
    targets = Endpoints(endpoints["lobby"], endpoints["engine"], endpoints["arbiter"],
                        endpoints["scoring"])
    for step in steps:
        say(f" step: {step.tables} concurrent tables, at most {step.actions_per_seat} calls per seat "
            f"or {step.seconds:.0f} s")
        async with seated_tables(targets, step.tables, step.actions_per_seat) as tables:
            server_before, client_before = cpu_seconds(stack.process.pid), time.process_time()
            run = await play_tables(tables, step.seconds)
            server_after, client = cpu_seconds(stack.process.pid), time.process_time() - client_before
        for line in run.lines():
            say(line)
        server = None if server_before is None or server_after is None else server_after - server_before
        say(cpu_line("server process (stammtisch up)", server, run))
        say(cpu_line("bot clients (this process)", client, run))


async def service_figures(redis_url: str, nats_url: str, data_dir: Path) -> None:
    """Start the stack as a child process and measure through it."""
    env = {**STACK_ENV, "REDIS_URL": redis_url, "NATS_URL": nats_url}
    with launched_stack(env, data_dir / "stack") as stack:
        await bare_costs(stack.endpoints, redis_url, nats_url)
        say()
        await arbiter_steps(stack, STEPS)


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
