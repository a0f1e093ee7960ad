"""Where the token signing secret comes from: the environment, or a file `up` makes.

There is no built-in secret (one in the source would let anyone sign tokens).
`stammtisch up` on one machine needs no configuration all the same: when
STAMMTISCH_TOKEN_SECRET is unset, the first run writes a random secret to
``<data dir>/token-secret`` (mode 0600) and later runs read it, so tokens
outlive a restart. `stammtisch serve` (containers, Kubernetes) never makes
one: its replicas must share a secret, which only the operator can give them.
"""

from __future__ import annotations

import dataclasses
import secrets
from pathlib import Path

from shared.config import Settings
from shared.infra.credentials import write_once
from shared.rpc.auth import check_secret

FILE_NAME = "token-secret"


def local_token_secret(data_dir: Path) -> str:
    """The secret in ``data_dir``, made (atomically, mode 0600) when there is none yet."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / FILE_NAME
    write_once(path, secrets.token_urlsafe(32) + "\n")
    return path.read_text().strip()


def with_local_secret(settings: Settings, data_dir: Path) -> Settings:
    """The settings, with the data folder's secret when the environment sets none."""
    if settings.token_secret:
        return settings
    return dataclasses.replace(settings, token_secret=local_token_secret(data_dir))


def require_token_secret(settings: Settings) -> Settings:
    """The settings when their secrets are usable; else exit with a message that says why."""
    if not settings.token_secret:
        raise SystemExit("STAMMTISCH_TOKEN_SECRET is not set: every replica needs the same secret "
                         "to sign and verify tokens (there is no built-in one); make one with "
                         "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'")
    try:
        check_secret(settings.token_secret)
        if settings.token_secret_previous:
            check_secret(settings.token_secret_previous, "STAMMTISCH_TOKEN_SECRET_PREVIOUS")
    except ValueError as exc:
        raise SystemExit(str(exc)) from exc
    return settings
