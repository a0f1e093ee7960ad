"""`stammtisch up --workers N`: N server processes on the same ports, supervised by the parent.

The parent forks the workers before any gRPC object exists (grpc-core does not survive a fork of
a process that has one); each builds its own loop, connections and servers and binds the shared
ports with SO_REUSEPORT. Workers are replicas in all but name: what a process does once (relay,
clocks, lifetime sweep) is safe with several, and each has its own Prometheus port so dashboard
sums stay true. The parent restarts a worker that dies and passes SIGTERM/SIGINT on; a worker
whose parent dies gets SIGTERM (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing.context import ForkProcess
from typing import Any

from shared.config import Settings
from shared.infra.local import claim_ports, free_port
from shared.obs.logs import get_logger
from shared.tables.placement import TABLE_SERVICES

log = get_logger("workers")

#: How long a worker may take to come up, and to stop after SIGTERM before it is killed.
READY_SECONDS = 60.0
#: A worker that dies sooner than this after its start is restarted only after this long.
RESTART_PAUSE = 1.0
_PR_SET_PDEATHSIG = 1

#: What a worker reports once its servers are up: its pid, service ports and metrics port.
Ready = dict[str, Any]
#: The body of one worker: serve ``settings`` until SIGTERM, calling ``ready`` once up.
WorkerMain = Callable[[Settings, Callable[[Ready], None]], None]


def shared_ports(settings: Settings, workers: int) -> tuple[Settings, list[int]]:
    """Settings whose service ports are fixed (every worker must bind the same ones, so port 0
    is resolved here once) with each worker's own table ports (shared/tables/placement.py), and a
    metrics port per worker."""
    claim_ports([*settings.ports.values(), settings.metrics_port])
    ports = {name: port or free_port() for name, port in settings.ports.items()}
    base = settings.table_port_base
    table_ports: dict[str, tuple[int, ...]] = {
        name: tuple(base + worker * len(TABLE_SERVICES) + index if base else free_port()
                    for worker in range(workers))
        for index, name in enumerate(TABLE_SERVICES)}
    metrics = [settings.metrics_port or free_port(), *(free_port() for _ in range(workers - 1))]
    return dataclasses.replace(settings, ports=ports, share_ports=True, table_ports=table_ports,
                               tournament_page_port=settings.tournament_page_port or free_port()), metrics


def die_with_parent() -> None:
    """Ask Linux to send this process SIGTERM when its parent dies (a no-op elsewhere)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _run_worker(body: WorkerMain, settings: Settings, sink: multiprocessing.connection.Connection,
                parent: int) -> None:
    die_with_parent()
    if os.getppid() != parent:  # the parent died before prctl took effect
        return
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)  # the event loop installs its own handlers

    def ready(info: Ready) -> None:
        with contextlib.suppress(OSError):  # a restarted worker's parent does not wait to hear
            sink.send({"pid": os.getpid(), **info})
        sink.close()

    body(settings, ready)


@dataclasses.dataclass
class _Slot:
    index: int
    settings: Settings
    process: ForkProcess | None = None
    started: float = 0.0
    restarts: int = 0


class WorkerPool:
    """N forked workers: started together, restarted one by one, stopped together."""

    def __init__(self, body: WorkerMain, settings: Settings, metrics_ports: Sequence[int]) -> None:
        self.body = body
        self._context = multiprocessing.get_context("fork")
        self.slots = [_Slot(i, dataclasses.replace(settings, metrics_port=port, worker_slot=i))
                      for i, port in enumerate(metrics_ports)]
        self._stop = threading.Event()

    def _start(self, slot: _Slot) -> multiprocessing.connection.Connection:
        source, sink = self._context.Pipe(duplex=False)
        process = self._context.Process(target=_run_worker, name=f"stammtisch-worker-{slot.index + 1}",
                                        args=(self.body, slot.settings, sink, os.getpid()))
        process.start()
        sink.close()
        slot.process, slot.started = process, time.monotonic()
        return source

    def start(self) -> list[Ready]:
        """Fork every worker and wait until each reports its servers up."""
        sources = [self._start(slot) for slot in self.slots]
        reports = []
        for slot, source in zip(self.slots, sources, strict=True):
            assert slot.process is not None
            if not source.poll(READY_SECONDS):
                raise RuntimeError(f"worker {slot.index + 1} did not come up")
            try:
                reports.append(source.recv())
            except EOFError:
                raise RuntimeError(f"worker {slot.index + 1} exited with {slot.process.exitcode} "
                                   "before it was up") from None
            source.close()
        return reports

    @property
    def pids(self) -> list[int]:
        """The workers' process ids, in slot order."""
        return [slot.process.pid or 0 for slot in self.slots if slot.process is not None]

    def stop_on_signals(self) -> None:
        """SIGTERM and SIGINT stop the pool (the parent's handlers; workers keep their own)."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self._stop.set())

    def supervise(self, interval: float = 0.5) -> None:
        """Restart any worker that died, until :meth:`stop_on_signals` fires."""
        while not self._stop.is_set():
            sentinels = [slot.process.sentinel for slot in self.slots if slot.process is not None]
            multiprocessing.connection.wait(sentinels, timeout=interval)
            for slot in self.slots:
                if slot.process is not None and not slot.process.is_alive() and not self._stop.is_set():
                    self._restart(slot)

    def _restart(self, slot: _Slot) -> None:
        assert slot.process is not None
        log.warning("worker_died", worker=slot.index + 1, pid=slot.process.pid,
                    exitcode=slot.process.exitcode)
        if time.monotonic() - slot.started < RESTART_PAUSE:
            self._stop.wait(RESTART_PAUSE)  # a worker that cannot start must not spin the parent
        slot.restarts += 1
        self._start(slot).close()
        log.info("worker_restarted", worker=slot.index + 1, pid=slot.process.pid,
                 restarts=slot.restarts)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM every worker, wait for all, kill whichever outlives ``timeout``."""
        self._stop.set()
        alive = [slot.process for slot in self.slots if slot.process is not None and slot.process.is_alive()]
        for process in alive:
            process.terminate()
        deadline = time.monotonic() + timeout
        for process in alive:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                log.error("worker_killed", pid=process.pid, reason="did not stop in time")
                process.kill()
                process.join()
