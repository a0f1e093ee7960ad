"""A "device" for terminal clients: an id and secret kept in a file, like an app's keychain.

The first use writes a fresh random pair (file mode 0600); every later use
logs in as the same lasting player (AccountService.LoginDevice).
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from shared.sdk.client import StammtischClient


def device_credentials(path: str | Path) -> tuple[str, str]:
    """(device_id, device_secret) from the file, made on first use."""
    file = Path(path)
    if not file.exists():
        file.parent.mkdir(parents=True, exist_ok=True)
        pair = {"device_id": "cli-" + secrets.token_hex(16), "device_secret": secrets.token_urlsafe(32)}
        descriptor = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            json.dump(pair, out)
    data = json.loads(file.read_text(encoding="utf-8"))
    return str(data["device_id"]), str(data["device_secret"])


async def login_from_file(client: StammtischClient, path: str | Path, name: str = "") -> str:
    """Log the client in as the file's device; returns the player id."""
    device_id, secret = device_credentials(path)
    await client.login_device(device_id, secret, name)
    return client.player_id
