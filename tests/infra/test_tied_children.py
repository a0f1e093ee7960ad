"""Children tied to their launcher by the parent-death signal, without Python code between fork and
exec (a ``preexec_fn`` in a process with gRPC's threads crashed a child with SIGSEGV in the suite)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from shared.infra.local import tied_to_this_process

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="util-linux's setpriv is missing")
def test_a_child_started_on_the_main_thread_gets_the_parent_death_signal() -> None:
    command = tied_to_this_process(["sh", "-c", "grep -m1 '^PPid' /proc/self/status"])
    assert command[1:4] == ["--pdeathsig", "TERM", "--"]
    assert subprocess.run(command, capture_output=True, text=True, check=True).stdout.startswith("PPid")


def test_off_the_main_thread_a_child_is_tied_only_when_its_thread_outlives_it() -> None:
    seen: list[list[str]] = []
    thread = threading.Thread(target=lambda: seen.extend([tied_to_this_process(["true"]),
                                                          tied_to_this_process(["true"], True)]))
    thread.start()
    thread.join()
    assert seen[0] == ["true"]
    assert seen[1][-1] == "true" and len(seen[1]) == (5 if shutil.which("setpriv") else 1)


def test_no_code_of_ours_runs_python_between_fork_and_exec() -> None:
    offenders = []
    for path in [*ROOT.glob("shared/**/*.py"), *ROOT.glob("services/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "preexec_fn":
                offenders.append(f"{path.relative_to(ROOT)}:{node.value.lineno}")
    assert offenders == []
