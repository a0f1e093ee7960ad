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
from services.perf.stats import Samples
from shared.localinfra import free_port, server_pair, start_redis
from shared.sdk.client import Endpoints


@dataclass(frozen=True)
class Step:
    """Tables at once, calls per acting seat and a time cap for one arbiter step."""

    tables: int
    actions_per_seat: int
    seconds: float
    #: Seats per table that act (the others only follow): 1 shows an action's cost without queueing.
    acting: int = SEATS

    @property
    def name(self) -> str:
        """How the step is called in the output."""
        tables = f"{self.tables} table{'s' if self.tables > 1 else ''}"
        return tables if self.acting == SEATS else f"{tables}, {self.acting} seat acting"


#: Bounded in calls and time: the 100-table step takes well under two minutes on 2 cores.
STEPS = (Step(1, 200, 30.0, acting=1), Step(1, 200, 30.0), Step(10, 60, 45.0), Step(100, 15, 90.0))
BARE_CALLS = 2000
#: Writes per Redis persistence setting (fsync on every write is the slow one).
FSYNC_CALLS = 1000
ENGINE_SECONDS = 2.0
#: The stack for the arbiter steps: rate limits out of the way, quiet logs (less work in the
#: measured process), server bots never involved.
STACK_ENV = {"STAMMTISCH_ACTIONS_PER_SECOND": "1000000", "STAMMTISCH_LOG_LEVEL": "error",
             "STAMMTISCH_LOG_FORMAT": "json"}


def say(line: str = "") -> None:
    """Print at once (the run is long; show progress)."""
    print(line, flush=True)


def ms(samples: Samples) -> str:
    """'p50 / p99 ms' of some samples."""
    return f"{samples.quantile(0.5) * 1e3:7.2f} / {samples.quantile(0.99) * 1e3:7.2f} ms"


async def bare_costs(endpoints: dict[str, str], redis_url: str, nats_url: str) -> list[Samples]:
    """The parts without any Stammtisch logic, against the same servers."""
    say(f"Bare costs (same machine, same run; {BARE_CALLS} calls each)")
    measured = [await bare.grpc_empty_call(endpoints["arbiter"], BARE_CALLS),
                await bare.redis_round_trip(redis_url, BARE_CALLS),
                await bare.nats_publish(nats_url, BARE_CALLS)]
    for samples in measured:
        say(samples.line())
    return measured


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


async def arbiter_step(stack: LaunchedStack, step: Step) -> TablesRun:
    """Fresh tables through the lobby, then every acting seat plays as fast as it can."""
    targets = Endpoints.of(stack.endpoints)
    say(f" step: {step.name} ({step.tables * SEATS} clients), at most {step.actions_per_seat} calls "
        f"per acting seat or {step.seconds:.0f} s")
    async with seated_tables(targets, step.tables, step.actions_per_seat, step.acting) as tables:
        server_before, client_before = cpu_seconds(stack.process.pid), time.process_time()
        run = await play_tables(tables, step.seconds)
        server_after, client = cpu_seconds(stack.process.pid), time.process_time() - client_before
    for line in run.lines():
        say(line)
    server = None if server_before is None or server_after is None else server_after - server_before
    say(cpu_line("server process (stammtisch up)", server, run))
    say(cpu_line("bot clients (this process)", client, run))
    return run


def summary(bare_samples: Sequence[Samples], runs: Sequence[tuple[Step, TablesRun]]) -> None:
    """The service figures next to the bare costs, one line each."""
    say(f"Summary (p50 / p99){'':<29}{'actions/s':>10}   {'action -> answer':<24}"
        "action -> other players' event")
    for samples in bare_samples:
        say(f"  bare: {samples.name:<40}{'':>10}   {ms(samples)}")
    for step, run in runs:
        say(f"  arbiter, {step.name:<37}{run.rate:>10,.0f}   {ms(run.answer):<24}{ms(run.others)}")


async def fsync_costs(data_dir: Path) -> list[Samples]:
    """The cost of each Redis persistence setting (STAMMTISCH_REDIS_FSYNC) on this disk."""
    say(f"Redis persistence (STAMMTISCH_REDIS_FSYNC; {FSYNC_CALLS} sequential writes each, "
        f"own redis-server per setting in {data_dir})")
    measured = []
    for fsync in ("off", "everysec", "always"):
        server = start_redis(free_port(), data_dir / f"redis-{fsync}", fsync)
        try:
            label = "no AOF" if fsync == "off" else f"AOF {fsync}"
            measured.append(await bare.redis_commit_write(server.url, FSYNC_CALLS, label))
        finally:
            server.stop()
        say(measured[-1].line())
    return measured


async def service_figures(redis_url: str, nats_url: str, data_dir: Path) -> None:
    """Start the stack as a child process and measure through it."""
    env = {**STACK_ENV, "REDIS_URL": redis_url, "NATS_URL": nats_url}
    with launched_stack(env, data_dir / "stack") as stack:
        bare_samples = await bare_costs(stack.endpoints, redis_url, nats_url)
        say()
        bare_samples += await fsync_costs(data_dir / "fsync")
        say()
        say(f"Arbiter: Wie Waldi tables of {SEATS} heuristic bot clients, as fast as they can "
            "(clients in this process, all four services in the child)")
        runs = [(step, await arbiter_step(stack, step)) for step in STEPS]
    say()
    summary(bare_samples, runs)


def main() -> int:
    """Print every figure of one run."""
    started = time.perf_counter()
    say(f"Stammtisch bench on {os.cpu_count()} CPU(s)")
    say()
    for line in engines.report(ENGINE_SECONDS):
        say(line)
    say()
    # The stack's Redis persists as `stammtisch up`'s does (AOF, fsync every second).
    with tempfile.TemporaryDirectory(prefix="stammtisch-bench-") as raw, \
            server_pair(Path(raw) / "servers", "everysec") as (redis, nats):
        asyncio.run(service_figures(redis.url, nats.url, Path(raw)))
    say()
    say(f"bench finished in {time.perf_counter() - started:.0f} s")
    return 0
