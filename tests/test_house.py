"""The house's rules, checked: which rooms may import which, and where a game may be named."""

from __future__ import annotations

import ast
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

from shared.games.catalog import CATALOGUE

ROOT = Path(__file__).resolve().parents[1]


@cache
def imported_modules(path: Path) -> frozenset[str]:
    """Every module a source file imports (absolute imports only; the project uses no others)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return frozenset(found)


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


def test_no_game_is_named_in_code_outside_its_package_and_the_tools() -> None:
    """A new game is one package: nothing else names a game (docs and data may)."""
    words = {part for name, game in CATALOGUE.items() for part in (name, game.title)}
    pattern = "|".join(sorted(re.escape(word) for word in words))
    packages = {game.package.replace(".", "/") for game in CATALOGUE.values()}
    listed = subprocess.run(["git", "grep", "-l", "-i", "-E", pattern, "--", "*.py", "*.proto"],
                            cwd=ROOT, capture_output=True, text=True, check=False).stdout.split()
    outside = [path for path in listed
               if not any(path.startswith(package + "/") for package in packages)
               and not path.startswith(("services/tools/", "tests/", "shared/api/"))]
    assert outside == []
