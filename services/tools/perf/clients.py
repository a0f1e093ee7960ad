"""The bench's bot clients in processes of their own, so they do not measure their own queueing.

With every client of a step in the bench process, one event loop served all
of them: an action waited behind its neighbours' work and behind the
process's garbage collections, and the figures showed that wait as the
server's latency. Here each client process sets up its share of the tables
(login, lobby, ready, every stream open), reports ready, plays on the parent's word and sends
back what it measured; the parent merges the figures over the time from its
word to the last process's end. Phones are separate devices: so are these.

The processes are spawned (not forked: the bench process already holds gRPC
objects, which do not survive a fork).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.connection
import time
from collections.abc import Mapping
from dataclasses import dataclass

import uvloop

from services.host.heap import settle_heap
from services.tools.perf.arbiter import SEATS, TablesRun, act_tables, following, seated_tables
from services.tools.perf.stats import Samples
from shared.sdk.client import Endpoints

#: How long a client process may take to seat its tables.
SETUP_SECONDS = 300.0


@dataclass(frozen=True)
class Plan:
    """What every client process of a step does."""

    endpoints: Mapping[str, str]
    actions_per_seat: int
    acting: int
    streamed: bool
    pace_seconds: float
    seconds: float


@dataclass(frozen=True)
class Share:
    """One client process's part of a step."""

    plan: Plan
    tables: int
    #: Player names of this process start here (names are unique over the step).
    first_player: int


async def _play(share: Share, conn: multiprocessing.connection.Connection) -> TablesRun:
    plan = share.plan
    async with seated_tables(Endpoints.of(dict(plan.endpoints)), share.tables, plan.actions_per_seat,
                             plan.acting, plan.streamed, plan.pace_seconds,
                             first_player=share.first_player) as tables, \
            following([seat for seats in tables for seat in seats]):
        settle_heap()  # as the servers do: no full collection stalls the clients mid-step
        conn.send("ready")
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # the word to start
        started = time.process_time()
        run = await act_tables(tables, plan.seconds)
        run.client_cpu = time.process_time() - started
        return run


def _client_main(share: Share, conn: multiprocessing.connection.Connection) -> None:
    """The body of one client process (on uvloop, as the servers): ready, play, report (or the error)."""
    try:
        conn.send(uvloop.run(_play(share, conn)))
    except Exception as err:  # noqa: BLE001 - the parent reports it; a bench must not hang on a dead child
        conn.send(RuntimeError(f"client process failed: {type(err).__name__}: {err}"))
    finally:
        conn.close()


def shares(plan: Plan, tables: int, processes: int) -> list[Share]:
    """``tables`` spread as evenly as possible over at most ``processes`` processes."""
    count = max(1, min(processes, tables))
    sizes = [tables // count + (1 if index < tables % count else 0) for index in range(count)]
    return [Share(plan, size, sum(sizes[:index]) * SEATS) for index, size in enumerate(sizes)]


class ClientProcesses:
    """Client processes seated and waiting; :meth:`play` starts them all and merges the figures."""

    def __init__(self, parts: list[Share]) -> None:
        context = multiprocessing.get_context("spawn")
        self._conns: list[multiprocessing.connection.Connection] = []
        self._processes = []
        for share in parts:
            mine, theirs = context.Pipe()
            process = context.Process(target=_client_main, args=(share, theirs), daemon=True,
                                      name="stammtisch-bench-clients")
            process.start()
            theirs.close()
            self._conns.append(mine)
            self._processes.append(process)

    def _receive(self, conn: multiprocessing.connection.Connection, timeout: float) -> object:
        if not conn.poll(timeout):
            raise RuntimeError("a client process did not answer in time")
        message = conn.recv()
        if isinstance(message, Exception):
            raise message
        return message

    def wait_ready(self) -> None:
        """Block until every process has seated its tables."""
        for conn in self._conns:
            self._receive(conn, SETUP_SECONDS)

    def play(self, seconds: float) -> TablesRun:
        """Start every process; block until all are done; the merged figures of the step."""
        started = time.perf_counter()
        for conn in self._conns:
            conn.send("go")
        runs = [self._receive(conn, seconds + SETUP_SECONDS) for conn in self._conns]
        elapsed = time.perf_counter() - started
        return merged([run for run in runs if isinstance(run, TablesRun)], elapsed)

    def close(self) -> None:
        """Wait for the processes to exit (they do once they reported); kill any that hangs."""
        for process in self._processes:
            process.join(30.0)
            if process.is_alive():
                process.kill()
                process.join()
        for conn in self._conns:
            conn.close()


def merged(runs: list[TablesRun], seconds: float) -> TablesRun:
    """One step's figures from each process's."""
    answer, others = Samples(runs[0].answer.name), Samples(runs[0].others.name)
    for run in runs:
        answer.values.extend(run.answer.values)
        others.values.extend(run.others.values)
    return TablesRun(sum(run.tables for run in runs), seconds, sum(run.applied for run in runs),
                     sum(run.refused for run in runs), answer, others,
                     client_cpu=sum(run.client_cpu for run in runs))
