"""deploy/Dockerfile and .dockerignore: one non-root image running the `stammtisch` command."""

from __future__ import annotations

import json
import re
import tomllib

from shared.config import DEFAULT_PORTS, Settings
from tests.support.deploy import DOCKERFILE_PATH, REPO_ROOT


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    logical: list[str] = []
    pending = ""
    for raw in DOCKERFILE_PATH.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    out = []
    for line in logical:
        instruction, _, args = line.partition(" ")
        out.append((instruction.upper(), args.strip()))
    return out


def _final_stage() -> list[tuple[str, str]]:
    instructions = _instructions()
    last_from = max(i for i, (name, _) in enumerate(instructions) if name == "FROM")
    return instructions[last_from:]


def test_base_image_is_python_311_slim() -> None:
    instructions = _instructions()
    args = dict(
        arg.split("=", 1) for name, arg in instructions if name == "ARG" and "=" in arg
    )
    for name, value in instructions:
        if name == "FROM":
            image = value.split()[0]
            image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
            assert image.startswith("python:3.11-slim"), image


def test_installs_the_project_without_dev_extras() -> None:
    runs = " ".join(args for name, args in _instructions() if name == "RUN")
    assert re.search(r"pip install [^&]*\.(\s|$)", runs), "installs the project from the repo"
    assert "[dev]" not in runs


def test_runs_as_non_root() -> None:
    stage = _final_stage()
    users = [args for name, args in stage if name == "USER"]
    assert users, "the runtime stage sets USER"
    args = dict(arg.split("=", 1) for name, arg in stage if name == "ARG" and "=" in arg)
    user = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], users[-1]).split(":")[0]
    assert user.isdigit() and int(user) > 0, "a numeric uid lets Kubernetes check runAsNonRoot"


def test_entrypoint_and_default_command() -> None:
    stage = dict(_final_stage())
    assert json.loads(stage["ENTRYPOINT"]) == ["stammtisch"]
    assert json.loads(stage["CMD"]) == ["serve", "--service", "lobby"]
    scripts = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "stammtisch" in scripts["project"]["scripts"]


def test_exposes_the_service_and_metrics_ports() -> None:
    exposed = {
        int(port.split("/")[0])
        for name, args in _final_stage() if name == "EXPOSE"
        for port in args.split()
    }
    assert exposed >= {*DEFAULT_PORTS.values(), Settings().metrics_port, Settings().tournament_page_port}


def test_dockerignore_keeps_the_build_context_small() -> None:
    patterns = (REPO_ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [p.strip() for p in patterns if p.strip() and not p.startswith("#")]
    for needed_out in (".venv", "**/.git", "tests"):
        assert needed_out in patterns, needed_out
    # What the image build copies must stay in the context.
    for needed_in in ("pyproject.toml", "shared", "services"):
        assert needed_in not in patterns, needed_in
    assert "!deploy/Dockerfile" in patterns
