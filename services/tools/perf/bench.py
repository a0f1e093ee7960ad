"""`stammtisch bench` (`make bench`): the rules engines, the bare parts, and the arbiter under load.

The servers run as a child process (`stammtisch up`) against a Redis and a
NATS this run starts in a temporary folder; the bot clients of each step run
in processes of their own (services/tools/perf/clients.py), one per core. So the
arbiter figures cross real process boundaries, the clients do not queue
behind each other in one event loop, and the bare costs next to them are
measured on the same machine in the same run. The machine may be shared:
each step says how much CPU every other process took meanwhile, and how
often the servers' event loops ran late (services/tools/perf/server_loops.py).

The arbiter steps run with one server process, then the saturating step again
with one worker per core (`--workers N`), side by side; then, on N workers, a
step offering half the measured capacity shows the latency below saturation.
Bots play over Play streams; the saturating step runs once more over unary Act
calls for comparison. Every client's stream is open, with the table's first
commit, before a step's clock and CPU count start (players sit at the table
before anyone plays): opening 400 streams while others already play counted
their setup as the actions' cost and showed as a seconds-long p99 of the
first events. CPU is summed over every server process. The last step
resumes from seq 0 over a 5,000-commit log (services/tools/perf/catchup.py; alone:
`stammtisch bench --catchup`). `stammtisch bench --soak` (services/tools/perf/soak.py)
holds many live tables and open streams and prints the servers' memory.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from services.host.launch import LaunchedStack, launched_stack
from services.tools.perf import bare, engines, rediscluster
from services.tools.perf.arbiter import SEATS, TablesRun
from services.tools.perf.clients import ClientProcesses, Plan, shares
from services.tools.perf.server_loops import loop_lag
from services.tools.perf.stats import Samples
from shared.infra.credentials import Login
from shared.infra.local import free_port, server_pair, start_redis


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
#: One table, one seat acting: an action's cost without queueing, against the bare floor (its p50
#: over up to 500 actions: over 200, runs on this shared 2-core machine differed by half).
ONE_SEAT = Step(1, 500, 30.0, acting=1)
STEPS = (ONE_SEAT, Step(1, 200, 30.0), Step(10, 60, 45.0), SATURATING)
#: The step offered half the capacity SATURATING measured on N workers (its pace follows), for
#: about 20 s: a p99 over 3,200 actions moved by a third from run to run.
HALF_LOAD = Step(20, 120, 60.0)
BARE_CALLS = 2000
#: Processes the bot clients of a step are spread over (a step's tables are split among them).
CLIENT_PROCESSES = os.cpu_count() or 1
#: Writes per Redis persistence setting (fsync on every write is the slow one).
FSYNC_CALLS = 1000
ENGINE_SECONDS = 2.0
#: How long the bare fan-out server is measured.
FANOUT_SECONDS = 5.0
#: The stack for the arbiter steps: rate limits out of the way, quiet logs (less work in the
#: measured process), server bots never involved.
STACK_ENV = {"STAMMTISCH_ACTIONS_PER_SECOND": "1000000", "STAMMTISCH_LOGINS_PER_MINUTE": "1000000",
             "STAMMTISCH_LOG_LEVEL": "error",
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


def machine_busy_seconds() -> float | None:
    """CPU time every process of the machine spent so far, all cores (Linux /proc; None elsewhere)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(value) for value in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def server_pids(stack: LaunchedStack) -> list[int]:
    """Every server process of the stack: `stammtisch up` and its workers."""
    return sorted({stack.process.pid, *stack.pids})


def cpu_by_pid(stack: LaunchedStack) -> dict[int, float | None]:
    """CPU time so far of each of the stack's server processes."""
    return {pid: cpu_seconds(pid) for pid in server_pids(stack)}


def cpu_spent(before: dict[int, float | None], after: dict[int, float | None]) -> dict[int, float] | None:
    """CPU each process spent between two readings (None without /proc)."""
    if None in before.values() or None in after.values():
        return None
    return {pid: (after[pid] or 0.0) - (start or 0.0) for pid, start in before.items()}


def servers_cpu(stack: LaunchedStack) -> float | None:
    """CPU time of all the stack's server processes together (None without /proc)."""
    each = cpu_by_pid(stack).values()
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
    one action per ``pace_seconds``); the clients run in processes of their own."""
    how = "Play streams" if streamed else "unary Act + Subscribe"
    pace = f", one action per {pace_seconds:.2f} s per seat" if pace_seconds else ""
    parts = shares(Plan(stack.endpoints, step.actions_per_seat, step.acting, streamed, pace_seconds,
                        step.seconds), step.tables, CLIENT_PROCESSES)
    say(f" step: {step.name} ({step.tables * SEATS} clients in {len(parts)} process(es), {how}, "
        f"{len(stack.pids)} worker(s){pace}), at most {step.actions_per_seat} actions per acting seat "
        f"or {step.seconds:.0f} s; load average {os.getloadavg()[0]:.1f}")
    clients = ClientProcesses(parts)
    try:
        await asyncio.to_thread(clients.wait_ready)
        before, machine_before = cpu_by_pid(stack), machine_busy_seconds()
        lag_before = loop_lag(stack.endpoints)
        run = await asyncio.to_thread(clients.play, step.seconds)
        after, machine_after = cpu_by_pid(stack), machine_busy_seconds()
        lag_after = loop_lag(stack.endpoints)
    finally:
        await asyncio.to_thread(clients.close)
    for line in run.lines():
        say(line)
    say(lag_after.since(lag_before).line())
    spent = cpu_spent(before, after)
    run.server_cpu = None if spent is None else sum(spent.values())
    say(cpu_line(f"server processes ({len(before)}, summed)", run.server_cpu, run))
    if spent is not None and len(spent) > 1:  # did the kernel spread the connections over the workers?
        say("  each server process: " + ", ".join(f"pid {pid} {seconds / run.seconds:.0%} of a core"
                                                   for pid, seconds in spent.items()))
    say(cpu_line(f"bot clients ({len(parts)} process(es), summed)", run.client_cpu, run))
    if spent is not None and machine_before is not None and machine_after is not None:
        others = machine_after - machine_before - sum(spent.values()) - run.client_cpu
        say(f"  every other process of this machine (Redis and NATS among them): "
            f"{others / run.seconds:.0%} of a core of {os.cpu_count()}; "
            f"load average {os.getloadavg()[0]:.1f}")
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
        server = start_redis(free_port(), data_dir / f"redis-{fsync}", Login.fresh(), fsync)
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
        fanout_rate, fanout_cpu = await bare.grpc_fanout_cpu(SATURATING.tables, SEATS, FANOUT_SECONDS,
                                                             cpu_seconds)
        fanout = (f"bare gRPC fan-out ({SATURATING.tables} groups of {SEATS} streams, each message in "
                  f"sent to its {SEATS} streams as bytes, no logic; a server process of its own): "
                  f"{fanout_rate:,.0f} messages in/s, server CPU "
                  + ("not available" if fanout_cpu is None else f"{fanout_cpu * 1e3:.2f} ms per message in"))
        say(f"  {fanout}")
        say()
        bare_samples += await fsync_costs(data_dir / "fsync")
        say()
        bare_samples += await cluster_costs(redis_url, data_dir / "redis-cluster")
        say()
        say(f"Arbiter: Wie Waldi tables of {SEATS} heuristic bot clients, as fast as they can "
            f"(clients in up to {CLIENT_PROCESSES} processes of their own, every service in the child)")
        runs = [(f"{step.name}, 1 worker", await arbiter_step(stack, step)) for step in STEPS]
        one_seat_unary = await arbiter_step(stack, ONE_SEAT, False)
        runs.append((f"{ONE_SEAT.name}, 1 worker, unary", one_seat_unary))
        runs.append((f"{SATURATING.name}, 1 worker, unary", await arbiter_step(stack, SATURATING, False)))
    with launched_stack(env, data_dir / "stack-n", workers=workers) as many:
        saturated = await arbiter_step(many, SATURATING)
        runs.append((f"{SATURATING.name}, {workers} workers", saturated))
        pace = HALF_LOAD.tables * SEATS / max(1.0, saturated.rate / 2)
        runs.append((f"half load, {HALF_LOAD.tables} tables, {workers} workers",
                     await arbiter_step(many, HALF_LOAD, pace_seconds=pace)))
    say()
    # Imported here: the step uses this module's helpers.
    from services.tools.perf import catchup

    await catchup.step(redis_url, nats_url, data_dir / "stack-catchup")
    say()
    summary(bare_samples, runs)
    floor = sum(samples.quantile(0.5) for samples in bare_samples[:3])
    by_name = dict(runs)
    half = runs[-1][1]
    say(f"Half load ({half.rate:,.0f} actions/s applied, {workers} workers): p99 action -> answer "
        f"{half.answer.quantile(0.99) * 1e3:.1f} ms, action -> other players' event "
        f"{half.others.quantile(0.99) * 1e3:.1f} ms (target: at most 20 ms each)")
    for how, run in (("Play", by_name[f"{ONE_SEAT.name}, 1 worker"]), ("unary", one_seat_unary)):
        say(f"{ONE_SEAT.name} ({how}): p50 action -> answer {run.answer.quantile(0.5) * 1e3:.2f} ms = "
            f"{run.answer.quantile(0.5) / floor:.1f} x the bare floor {floor * 1e3:.2f} ms (empty call + "
            "Redis round trip + NATS publish, p50s of this run; target: at most 1.5 x)")
    one = by_name[f"{SATURATING.name}, 1 worker"]
    if one.server_cpu is not None and one.applied:
        say(f"Server CPU per applied action ({SATURATING.name}, Play, 1 worker): "
            f"{one.server_cpu / one.applied * 1e3:.2f} ms (target: at most 0.8 ms); the {fanout}")
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
