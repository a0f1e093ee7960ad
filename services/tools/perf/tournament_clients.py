"""The tournament load test's entrants in client processes of their own, each with bounded memory.

All entrants in the load test's own process shared one event loop: at 1,000
entrants it answered the server's keepalive pings too late (the server dropped
its connections), and at full speed it grew without bound. Here each process
logs in and registers its share of the entrants on the parent's word, then
plays them through the tournament on the next word, and sends back what it
measured: when each action was answered and how long it took, its CPU and
its peak memory. A process whose memory passes its cap reports that and stops
instead of taking the machine with it. Spawned, not forked (gRPC objects do
not survive a fork).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import multiprocessing
import multiprocessing.connection
import os
import resource
import signal
import time
import tracemalloc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import uvloop

from services.host.heap import settle_heap
from services.tools.perf.loadtest import TimedClient
from services.tools.perf.stats import Samples
from shared.sdk import tournament as sdk
from shared.sdk.client import Endpoints

#: How long a phase (log in and register, or the whole tournament) may take beyond its cap.
GRACE_SECONDS = 120.0
#: Logins (unary calls) a process has in flight at once.
LOGINS_IN_FLIGHT = 100
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Share:
    """One process's entrants: names ``load-{first}`` on, and how they play."""

    endpoints: Mapping[str, str]
    tournament_id: str
    game: str
    first: int
    count: int
    think_seconds: float
    memory_cap_bytes: int
    #: The tournament's time cap: entrants still playing then are stopped and reported.
    seconds: float


@dataclass
class Measured:
    """What one client process measured while its entrants played."""

    #: (wall-clock time the answer came, seconds from action to answer) per action.
    actions: list[tuple[float, float]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    client_cpu: float = 0.0
    peak_rss_bytes: int = 0
    pid: int = 0


class _RecordingSamples(Samples):
    """Samples that also note when each came, so the parent can split them by round."""

    def __init__(self, measured: Measured) -> None:
        super().__init__("action -> answer")
        self._measured = measured

    def add(self, seconds: float) -> None:
        """Record one duration with the time it ended."""
        self._measured.actions.append((time.time(), seconds))


def shares(players: int, processes: int) -> list[tuple[int, int]]:
    """(first entrant, count) per process: ``players`` spread as evenly as possible over at most
    ``processes`` processes."""
    count = max(1, min(processes, players))
    sizes = [players // count + (1 if index < players % count else 0) for index in range(count)]
    return [(sum(sizes[:index]), size) for index, size in enumerate(sizes) if size]


def peak_rss_bytes() -> int:
    """This process's peak resident memory so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def current_rss_bytes() -> int:
    """This process's resident memory now."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _memory_guard(cap: int) -> None:
    """Return once the process's memory passes ``cap`` (the caller stops its entrants)."""
    while current_rss_bytes() <= cap:
        await asyncio.sleep(0.5)


def _biggest_allocations(count: int = 8) -> list[str]:
    """Where the most memory was allocated, if Python traces it (PYTHONTRACEMALLOC=N): what a
    process that passed its cap reports about itself."""
    if not tracemalloc.is_tracing():
        return []
    stats = tracemalloc.take_snapshot().statistics("traceback")[:count]
    return [f"  {stat.size / 2**20:,.0f} MiB in {stat.count} blocks at "
            + " <- ".join(f"{frame.filename.rsplit('/', 2)[-1]}:{frame.lineno}" for frame in stat.traceback)
            for stat in stats]


async def _entrant(client: TimedClient, share: Share, index: int, measured: Measured) -> None:
    try:
        await sdk.play_tournament(client, share.tournament_id,
                                  sdk.bot_player(share.game, index, think_seconds=share.think_seconds),
                                  lean=True)
    except Exception as exc:  # noqa: BLE001 - a load test reports failures, it does not stop
        measured.failures.append(f"entrant {index}: {type(exc).__name__}: {exc}")


async def _login(client: TimedClient, name: str, gate: asyncio.Semaphore) -> None:
    async with gate:
        await client.login(name)


def _errors(outcomes: Sequence[object], first: int, what: str) -> list[str]:
    return [f"{what} {first + offset}: {type(err).__name__}: {err}"
            for offset, err in enumerate(outcomes) if isinstance(err, BaseException)]


async def _run(share: Share, conn: multiprocessing.connection.Connection) -> Measured:
    measured = Measured(pid=os.getpid())
    samples = _RecordingSamples(measured)
    endpoints = Endpoints.of(dict(share.endpoints))
    clients = [TimedClient(endpoints, samples) for _ in range(share.count)]
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(None, conn.recv)  # the word to log in
        gate = asyncio.Semaphore(LOGINS_IN_FLIGHT)
        logins = await asyncio.gather(*(_login(client, f"load-{share.first + offset}", gate)
                                        for offset, client in enumerate(clients)), return_exceptions=True)
        conn.send(("logged_in", _errors(logins, share.first, "login")))
        await loop.run_in_executor(None, conn.recv)  # the word to register, all at once
        outcomes = await asyncio.gather(*(sdk.register(client, share.tournament_id) for client in clients),
                                        return_exceptions=True)
        conn.send(("registered", _errors(outcomes, share.first, "register")))
        settle_heap()
        await loop.run_in_executor(None, conn.recv)  # the word that the tournament started
        started = time.process_time()
        entrants = [asyncio.create_task(_entrant(client, share, share.first + offset, measured))
                    for offset, client in enumerate(clients)]
        guard = asyncio.create_task(_memory_guard(share.memory_cap_bytes))
        deadline = loop.time() + share.seconds
        while not guard.done() and not all(task.done() for task in entrants) and loop.time() < deadline:
            await asyncio.wait([*entrants, guard], timeout=deadline - loop.time(),
                               return_when=asyncio.FIRST_COMPLETED)
        if guard.done():
            measured.failures.append(f"client process {os.getpid()} passed its memory cap "
                                     f"({share.memory_cap_bytes / 2**20:.0f} MiB): entrants stopped")
            measured.failures.extend(_biggest_allocations())
        playing = sum(1 for task in entrants if not task.done())
        if playing:
            measured.failures.append(f"{playing} entrants still playing after {share.seconds:.0f} s")
        for task in (*entrants, guard):
            task.cancel()
        await asyncio.gather(*entrants, guard, return_exceptions=True)
        measured.client_cpu = time.process_time() - started
    finally:
        await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)
    measured.peak_rss_bytes = peak_rss_bytes()
    return measured


def _die_with_launcher(launcher: int) -> None:
    """SIGKILL this process when the load test that spawned it dies (Linux), as its stack does."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != launcher:  # it died before prctl took effect
        os._exit(1)


def _client_main(share: Share, conn: multiprocessing.connection.Connection, launcher: int) -> None:
    """The body of one client process (on uvloop, as the servers and the bench's clients): register
    on the word, play on the next, report (or the error)."""
    _die_with_launcher(launcher)
    try:
        conn.send(("done", uvloop.run(_run(share, conn))))
    except Exception as err:  # noqa: BLE001 - the parent reports it; a load test must not hang on a dead child
        conn.send(("error", f"client process failed: {type(err).__name__}: {err}"))
    finally:
        conn.close()


class EntrantProcesses:
    """Client processes holding the entrants; the parent steps them through the phases."""

    def __init__(self, parts: list[Share]) -> None:
        context = multiprocessing.get_context("spawn")
        self._conns: list[multiprocessing.connection.Connection] = []
        self.processes: list[multiprocessing.process.BaseProcess] = []
        for share in parts:
            mine, theirs = context.Pipe()
            process = context.Process(target=_client_main, args=(share, theirs, os.getpid()), daemon=True,
                                      name="stammtisch-tournament-entrants")
            process.start()
            theirs.close()
            self._conns.append(mine)
            self.processes.append(process)

    def _each(self, timeout: float) -> list[tuple[str, object]]:
        deadline = time.monotonic() + timeout
        answers = []
        for conn in self._conns:
            if not conn.poll(max(0.0, deadline - time.monotonic())):
                raise RuntimeError("a client process did not answer in time")
            answers.append(conn.recv())
        return answers

    def step(self, word: str, timeout: float) -> list[str]:
        """Every process logs in (``word`` "login") or registers ("register") its entrants; blocks
        until all did; the calls refused."""
        for conn in self._conns:
            conn.send(word)
        refused: list[str] = []
        for kind, body in self._each(timeout + GRACE_SECONDS):
            if kind == "error":
                raise RuntimeError(str(body))
            assert isinstance(body, list)
            refused.extend(body)
        return refused

    def play(self, seconds: float) -> list[Measured]:
        """Every process plays its entrants to the tournament's end; blocks until all reported."""
        for conn in self._conns:
            conn.send("play")
        measured: list[Measured] = []
        for kind, body in self._each(seconds + GRACE_SECONDS):
            if kind == "error":
                measured.append(Measured(failures=[str(body)]))
            else:
                assert isinstance(body, Measured)
                measured.append(body)
        return measured

    def close(self, wait: float = 30.0) -> None:
        """Wait for the processes to exit (they do once they reported); kill any that hangs."""
        for conn in self._conns:  # a process still waiting for a word reads the end and exits
            conn.close()
        deadline = time.monotonic() + wait
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
