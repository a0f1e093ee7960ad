"""`stammtisch bench` (`make bench`): the rules engines, the bare parts, and the arbiter under load.

The servers run as a child process (`stammtisch up`) against a Redis and a
NATS this run starts in a temporary folder; the bot clients run here. So the
arbiter figures cross real process boundaries, and the bare costs next to them
are measured on the same machine in the same run.

The arbiter steps run with one server process, then the saturating step again
with one worker per core (`--workers N`), side by side; then, on N workers, a
step offering half the measured capacity shows the latency below saturation.
Bots play over Play streams; the saturating step runs once more over unary Act
calls for comparison. CPU is summed over every server process. `stammtisch
bench --soak` (services/perf/soak.py) holds many live tables and open streams
and prints the servers' memory.
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
from services.perf import bare, engines, rediscluster
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
SATURATING = Step(100, 15, 90.0)
STEPS = (Step(1, 200, 30.0, acting=1), Step(1, 200, 30.0), Step(10, 60, 45.0), SATURATING)
#: The step offered half the capacity SATURATING measured on N workers (its pace follows).
HALF_LOAD = Step(20, 40, 60.0)
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


def server_pids(stack: LaunchedStack) -> list[int]:
    """Every server process of the stack: `stammtisch up` and its workers."""
    return sorted({stack.process.pid, *stack.pids})


def servers_cpu(stack: LaunchedStack) -> float | None:
    """CPU time of all the stack's server processes together (None without /proc)."""
    each = [cpu_seconds(pid) for pid in server_pids(stack)]
    return None if any(seconds is None for seconds in each) else sum(s for s in each if s is not None)


def cpu_line(who: str, seconds: float | None, run: TablesRun) -> str:
    """CPU a process spent on a step: share of one core and per applied action."""
    if seconds is None:
        return f"  {who}: CPU time not available on this system"
    per_action = seconds / run.applied * 1e3 if run.applied else 0.0
    return (f"  {who:<44} CPU {seconds:6.1f} s = {seconds / run.seconds:4.0%} of a core, "
            f"{per_action:5.2f} ms per applied action")


async def arbiter_step(stack: LaunchedStack, step: Step, streamed: bool = True,
                       pace_seconds: float = 0.0) -> TablesRun:
    """Fresh tables through the lobby, then every acting seat plays as fast as it can (or at
    one action per ``pace_seconds``)."""
    targets = Endpoints.of(stack.endpoints)
    how = "Play streams" if streamed else "unary Act + Subscribe"
    pace = f", one action per {pace_seconds:.2f} s" if pace_seconds else ""
    say(f" step: {step.name} ({step.tables * SEATS} clients, {how}, {len(stack.pids)} worker(s){pace}), "
        f"at most {step.actions_per_seat} actions per acting seat or {step.seconds:.0f} s")
    async with seated_tables(targets, step.tables, step.actions_per_seat, step.acting, streamed,
                             pace_seconds) as tables:
        server_before, client_before = servers_cpu(stack), time.process_time()
        run = await play_tables(tables, step.seconds)
        server_after, client = servers_cpu(stack), time.process_time() - client_before
    for line in run.lines():
        say(line)
    server = None if server_before is None or server_after is None else server_after - server_before
    say(cpu_line(f"server processes ({len(server_pids(stack))}, summed)", server, run))
    say(cpu_line("bot clients (this process)", client, run))
    return run


def summary(bare_samples: Sequence[Samples], runs: Sequence[tuple[str, TablesRun]]) -> None:
    """The service figures next to the bare costs, one line each."""
    say(f"Summary (p50 / p99){'':<29}{'actions/s':>10}   {'action -> answer':<24}"
        "action -> other players' event")
    for samples in bare_samples:
        say(f"  bare: {samples.name:<40}{'':>10}   {ms(samples)}")
    for name, run in runs:
        say(f"  arbiter, {name:<37}{run.rate:>10,.0f}   {ms(run.answer):<24}{ms(run.others)}")


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


async def cluster_costs(redis_url: str, data_dir: Path) -> list[Samples]:
    """A table commit on one Redis and on Redis Cluster, with and without the replica wait."""
    say(f"Redis Cluster (STAMMTISCH_REDIS_CLUSTER, STAMMTISCH_REDIS_WAIT_MS; {FSYNC_CALLS} sequential "
        f"table commits each; 3 masters + 1 replica each in {data_dir})")
    measured = await rediscluster.replica_wait_costs(redis_url, data_dir, FSYNC_CALLS)
    for samples in measured:
        say(samples.line())
    return measured


async def service_figures(redis_url: str, nats_url: str, data_dir: Path, workers: int) -> None:
    """Start the stack as a child process and measure through it: on one worker, then on N."""
    env = {**STACK_ENV, "REDIS_URL": redis_url, "NATS_URL": nats_url}
    with launched_stack(env, data_dir / "stack") as stack:
        bare_samples = await bare_costs(stack.endpoints, redis_url, nats_url)
        say()
        bare_samples += await fsync_costs(data_dir / "fsync")
        say()
        bare_samples += await cluster_costs(redis_url, data_dir / "redis-cluster")
        say()
        say(f"Arbiter: Wie Waldi tables of {SEATS} heuristic bot clients, as fast as they can "
            "(clients in this process, all four services in the child)")
        runs = [(f"{step.name}, 1 worker", await arbiter_step(stack, step)) for step in STEPS]
        runs.append((f"{SATURATING.name}, 1 worker, unary", await arbiter_step(stack, SATURATING, False)))
    with launched_stack(env, data_dir / "stack-n", workers=workers) as many:
        saturated = await arbiter_step(many, SATURATING)
        runs.append((f"{SATURATING.name}, {workers} workers", saturated))
        pace = HALF_LOAD.tables * SEATS / max(1.0, saturated.rate / 2)
        runs.append((f"half load, {HALF_LOAD.tables} tables, {workers} workers",
                     await arbiter_step(many, HALF_LOAD, pace_seconds=pace)))
    say()
    summary(bare_samples, runs)
    one = next(run for name, run in runs if name == f"{SATURATING.name}, 1 worker")
    say(f"Saturated throughput ({SATURATING.name}, Play): 1 worker {one.rate:,.0f} actions/s, "
        f"{workers} workers {saturated.rate:,.0f} actions/s; half load offered "
        f"{saturated.rate / 2:,.0f} actions/s")


def main(workers: int | None = None) -> int:
    """Print every figure of one run (``workers``: N of the multi-worker steps; one per core)."""
    workers = workers or os.cpu_count() or 1
    started = time.perf_counter()
    say(f"Stammtisch bench on {os.cpu_count()} CPU(s)")
    say()
    for line in engines.report(ENGINE_SECONDS):
        say(line)
    say()
    # The stack's Redis persists as `stammtisch up`'s does (AOF, fsync every second).
    with tempfile.TemporaryDirectory(prefix="stammtisch-bench-") as raw, \
            server_pair(Path(raw) / "servers", "everysec") as (redis, nats):
        asyncio.run(service_figures(redis.url, nats.url, Path(raw), workers))
    say()
    say(f"bench finished in {time.perf_counter() - started:.0f} s")
    return 0
