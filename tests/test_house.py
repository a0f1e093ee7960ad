"""The house's rules, checked: which rooms may import which, and where a game may be named."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(path: Path) -> set[str]:
    """Every module a source file imports (absolute imports only; the project uses no others)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def offenders(room: str, banned: str) -> list[str]:
    """Files under ``room`` importing any module under the dotted prefix ``banned``."""
    return sorted(f"{path.relative_to(ROOT)} imports {module}"
                  for path in (ROOT / room).rglob("*.py")
                  for module in imported_modules(path)
                  if module == banned or module.startswith(banned + "."))


def test_shared_never_imports_services() -> None:
    assert offenders("shared", "services") == []


@pytest.mark.parametrize("service", sorted(p.name for p in (ROOT / "services").iterdir()
                                           if (p / "__init__.py").exists() and p.name != "tools"))
def test_no_service_imports_the_tools_only_the_command_line_runs_them(service: str) -> None:
    allowed = ["services/host/cli.py"]
    assert [found for found in offenders(f"services/{service}", "services.tools")
            if found.split(" ")[0] not in allowed] == []


def test_the_pure_games_import_no_transport() -> None:
    problems = [found for banned in ("grpc", "google.protobuf", "redis", "nats", "shared.api",
                                     "shared.rpc", "shared.infra", "shared.tables", "shared.sdk")
                for found in offenders("shared/games", banned)]
    assert problems == []
