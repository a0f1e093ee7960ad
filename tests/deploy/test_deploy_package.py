"""The installed package (what the image installs with `pip install .`) carries every game whole."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from shared.games.catalog import CATALOGUE
from tests.support.deploy import REPO_ROOT


@pytest.mark.slow
def test_the_wheel_carries_each_built_in_games_rules_schemas_and_cases(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy as the image's build stage has it: the build writes there
    for part in ("shared", "services"):
        shutil.copytree(REPO_ROOT / part, source / part,
                        ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    shutil.copy(REPO_ROOT / "pyproject.toml", source)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path), str(source)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("stammtisch-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    built_in = [game for game in CATALOGUE.values() if game.package.startswith("shared.games.")]
    assert built_in
    for game in built_in:
        folder = REPO_ROOT / game.package.replace(".", "/")
        data = [path for path in folder.rglob("*") if path.suffix in (".json", ".md")]
        assert any(path.parent.name == "schemas" for path in data), game.name
        missing = [str(path.relative_to(REPO_ROOT)) for path in data
                   if str(path.relative_to(REPO_ROOT)) not in names]
        assert missing == [], game.name
