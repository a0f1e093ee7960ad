"""No credential is written in a deployment file: every password, secret and token value in
docker-compose.yml and deploy/ is a variable, a reference to a Secret, or an obvious placeholder."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.deploy import COMPOSE_PATH, DEPLOY_DIR, REPO_ROOT, load_yaml_all

#: A key whose value would be a credential.
_CREDENTIAL_KEY = re.compile(r"(pass(word)?|secret(_previous)?|token)$", re.IGNORECASE)
#: Values that hold none: a variable of the caller or the server's environment, or a placeholder.
_NO_CREDENTIAL = re.compile(r"^(\$\{[A-Z0-9_]+(:[-?][^}]*)?\}|<< \$[A-Z0-9_]+ >>|\$[A-Z0-9_]+|REPLACE-ME)$")
#: A URL carrying a password.
_URL_WITH_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]*:[^@\s/]+@")
#: Keys that name a Secret or its key, or switch auth on, rather than hold a credential.
_NAMES = {"existingSecret", "existingSecretPasswordKey", "usePassword", "secretName", "key", "name"}


def _files() -> list[Path]:
    return [COMPOSE_PATH, *sorted(DEPLOY_DIR.rglob("*.yaml")), *sorted(DEPLOY_DIR.rglob("*.yml"))]


def _credentials(node: Any, where: str) -> Iterator[str]:
    """"where: key=value" for every scalar under a credential-like key that is not a reference."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                yield from _credentials(value, f"{where}.{key}")
            elif (_CREDENTIAL_KEY.search(str(key)) and str(key) not in _NAMES
                  and isinstance(value, str) and value and not _NO_CREDENTIAL.match(value)):
                yield f"{where}.{key}={value}"
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _credentials(item, f"{where}[{index}]")


@pytest.mark.parametrize("path", _files(), ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_no_credential_is_written_in_the_file(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not _URL_WITH_PASSWORD.search(text), "a URL with a password"
    found = [found for doc in load_yaml_all(path) for found in _credentials(doc, path.name)]
    assert found == []


def test_the_check_sees_a_written_credential() -> None:
    """The checks above would notice a password written in a file or in a URL."""
    assert list(_credentials({"env": {"STAMMTISCH_REDIS_PASSWORD": "hunter2"}}, "x"))
    assert not list(_credentials({"env": {"STAMMTISCH_REDIS_PASSWORD": "${P:?set P}"}}, "x"))
    assert _URL_WITH_PASSWORD.search("REDIS_URL: redis://:hunter2@redis:6379/0")
    assert not _URL_WITH_PASSWORD.search("REDIS_URL: redis://redis:6379/0")
