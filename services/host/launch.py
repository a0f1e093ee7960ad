"""Start `stammtisch up` as a child process on free ports and read its endpoints.

Used by benchmarks and load tests (clients and servers in separate processes,
as in production) and by the smoke test (the stack exactly as a user runs it).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from shared.config import SERVICE_NAMES
from shared.infra.local import free_port, tied_to_this_process

STAMMTISCH = str(Path(sys.executable).parent / "stammtisch")
_ENDPOINT = re.compile(r"\s+(\w+)\s+(?:grpcs?|http|redis|nats)://(\S+)")
_DOOR = re.compile(r"door grpcs://(\S+)$")
_CA = re.compile(r"ca (\S.*)$")
_WORKERS = re.compile(r"Stammtisch is up \(\d+ workers?, pid ([\d, ]+)\)")
_TABLE_PORTS = re.compile(r"\s+(\w+)\s+tables placed on each worker's own port: ([\d, ]+)")


@dataclass
class LaunchedStack:
    """A running `stammtisch up`: its process, what it printed about itself, and its log file. Its
    output goes to files (stdout copied by a thread after the banner): a pipe nobody reads would fill
    up and block the server's event loop."""

    process: subprocess.Popen[str]
    endpoints: dict[str, str]
    log_path: Path
    #: The server processes' pids: the stack's own, or its workers' (``--workers N``).
    pids: list[int]
    _drain: threading.Thread | None = None
    #: With several workers: per table service, each worker's own port, in the workers' order
    #: (that of ``pids`` and of the ``metrics``, ``metrics2``... endpoints; shared/tables/placement.py).
    table_ports: dict[str, list[int]] = field(default_factory=dict)
    #: The door's "host:port" (TLS; every service behind it) and the CA certificate it is trusted with.
    door: str = ""
    ca: Path | None = None
    #: The banner's lines as printed.
    banner: list[str] = field(default_factory=list)

    @property
    def door_pids(self) -> list[int]:
        """The door's nginx processes: its master (its pid file in the data folder) and the
        master's workers (Linux /proc; empty elsewhere or without a door)."""
        try:
            master = int((self.log_path.parent / "door" / "nginx.pid").read_text())
        except (OSError, ValueError):
            return []
        workers = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == master:
                    workers.append(int(stat.parent.name))
        return [master, *sorted(workers)]

    def stop(self, timeout: float = 30.0) -> str:
        """SIGTERM, wait, and return what it logged (its stderr, kept in a file so it never blocks)."""
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self._drain is not None:
            self._drain.join(timeout)
        return self.log_path.read_text()


def _drain_stdout(process: subprocess.Popen[str], path: Path) -> threading.Thread:
    """Copy the rest of the child's stdout into ``path`` until it closes."""
    assert process.stdout is not None
    source = process.stdout

    def copy() -> None:
        with path.open("w") as sink:
            shutil.copyfileobj(source, sink)

    thread = threading.Thread(target=copy, name=f"stdout-{process.pid}", daemon=True)
    thread.start()
    return thread


def stack_env(overrides: Mapping[str, str], data_dir: Path) -> dict[str, str]:
    """Environment for a stack on free ports with its own key prefix."""
    ports = {f"STAMMTISCH_{name.upper()}_PORT": str(free_port()) for name in SERVICE_NAMES}
    return {**os.environ, **ports, "STAMMTISCH_METRICS_PORT": str(free_port()),
            "STAMMTISCH_DOOR_PORT": str(free_port()),
            "STAMMTISCH_TOURNAMENT_PAGE_PORT": str(free_port()),
            "STAMMTISCH_KEY_PREFIX": f"run{os.getpid()}x{free_port()}",
            "STAMMTISCH_DATA_DIR": str(data_dir), "STAMMTISCH_GRACE_SECONDS": "1", **overrides}


def start_stack(overrides: Mapping[str, str], data_dir: Path, timeout: float = 60.0,
                workers: int = 1) -> LaunchedStack:
    """Launch and wait for the 'Press Ctrl-C' line; endpoints by name (lobby, metrics, redis...;
    with several workers, ``metrics2`` and on are the other workers' metrics), the door and its CA."""
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "stack.log"
    with log_path.open("w") as log:
        # The stack dies with its launcher (SIGTERM, a clean stop): a load test that crashed or
        # was killed must not leave servers behind.
        process = subprocess.Popen(tied_to_this_process([STAMMTISCH, "up", "--workers", str(workers)]),
                                   env=stack_env(overrides, data_dir), stdout=subprocess.PIPE,
                                   stderr=log, text=True)
    endpoints: dict[str, str] = {}
    pids: list[int] = []
    table_ports: dict[str, list[int]] = {}
    door, ca, banner = "", None, []
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        banner.append(line.rstrip("\n"))
        if found_door := _DOOR.match(line):
            door = found_door.group(1)
        if (found_ca := _CA.match(line)) and Path(found_ca.group(1)).exists():
            ca = Path(found_ca.group(1))
        workers_line = _WORKERS.match(line)
        if workers_line:
            pids = [int(pid) for pid in workers_line.group(1).split(",")]
        found = _ENDPOINT.match(line)
        if found:
            endpoints[found.group(1)] = found.group(2)
        placed = _TABLE_PORTS.match(line)
        if placed:
            table_ports[placed.group(1)] = [int(port) for port in placed.group(2).split(",")]
        if line.startswith("Press Ctrl-C"):
            return LaunchedStack(process, endpoints, log_path, pids,
                                 _drain_stdout(process, data_dir / "stdout.log"), table_ports, door, ca,
                                 banner)
    process.kill()
    process.communicate()
    raise RuntimeError(f"the stack did not come up: {log_path.read_text()[-2000:]}")


@contextlib.contextmanager
def launched_stack(overrides: Mapping[str, str], data_dir: Path,
                   workers: int = 1) -> Iterator[LaunchedStack]:
    """A stack for the duration of the block."""
    stack = start_stack(overrides, data_dir, workers=workers)
    try:
        yield stack
    finally:
        if stack.process.poll() is None:
            stack.stop()
