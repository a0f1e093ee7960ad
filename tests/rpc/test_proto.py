"""The generated API code matches proto/, and the contracts pass buf lint."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from services.tools.protogen import API_DIR, PROTO_DIR, generate


def test_generated_code_is_up_to_date(tmp_path: Path) -> None:
    fresh = {p.relative_to(tmp_path): p.read_text() for p in generate(tmp_path)}
    committed = {p.relative_to(API_DIR): p.read_text() for p in API_DIR.rglob("*_pb2*.py*")}
    assert fresh.keys() == committed.keys(), "run `make proto`"
    stale = [str(name) for name, text in fresh.items() if committed[name] != text]
    assert not stale, f"out of date, run `make proto`: {stale}"


def test_buf_lint_passes() -> None:
    buf = Path(sys.executable).parent / "buf"
    result = subprocess.run([str(buf), "lint"], cwd=PROTO_DIR, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
