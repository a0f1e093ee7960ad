"""Credentials of Redis and NATS: how they ride in a server URL, how logs leave them out,
and the ones `stammtisch up` keeps for the servers it starts.

Every client here connects with the URL it is given, so a login lives in the URL
(``redis://user:password@host``, ``nats://user:password@host``); shared/config.py puts
STAMMTISCH_REDIS_USERNAME/PASSWORD and STAMMTISCH_NATS_USER/PASSWORD there. Such a URL is
never logged or printed whole: :func:`without_login` first.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

#: The NATS user of the servers `up` and the tests start (Redis: its default user, by password).
NATS_USER = "stammtisch"
#: The file in `up`'s data folder with its servers' credentials (mode 0600).
FILE_NAME = "infra-credentials.json"


@dataclass(frozen=True)
class Login:
    """A user name ("" for Redis's default user) and its password."""

    username: str
    password: str

    @classmethod
    def fresh(cls, username: str = "") -> Login:
        """A random password (URL-safe characters, so it needs no quoting in a config file)."""
        return cls(username, secrets.token_urlsafe(24))


def _hosts(urls: str) -> list[str]:
    return [url.strip() for url in urls.split(",") if url.strip()]


def _netloc_host(netloc: str) -> str:
    return netloc.rpartition("@")[2]


def with_login(urls: str, login: Login) -> str:
    """The URL (or each of a comma-separated list) carrying ``login``, replacing any it had."""
    userinfo = f"{quote(login.username, safe='')}:{quote(login.password, safe='')}@"
    return ",".join(urlunsplit(parts._replace(netloc=userinfo + _netloc_host(parts.netloc)))
                    for parts in map(urlsplit, _hosts(urls)))


def without_login(urls: str) -> str:
    """The URL (or list) without user and password: what logs and banners may show."""
    return ",".join(urlunsplit(parts._replace(netloc=_netloc_host(parts.netloc)))
                    for parts in map(urlsplit, _hosts(urls)))


def login_of(urls: str) -> Login | None:
    """The login of the first URL that has a password; None when none has."""
    for url in _hosts(urls):
        parts = urlsplit(url)
        if parts.password:
            return Login(unquote(parts.username or ""), unquote(parts.password))
    return None


@dataclass(frozen=True)
class ServerLogins:
    """The logins of one Redis and one NATS (or one cluster of each)."""

    redis: Login
    nats: Login

    @classmethod
    def fresh(cls) -> ServerLogins:
        """New random passwords (test servers, tools' throw-away servers)."""
        return cls(Login.fresh(), Login.fresh(NATS_USER))


def local_logins(data_dir: Path) -> ServerLogins:
    """The logins in ``data_dir``, made (atomically, mode 0600) when there are none yet, so a
    restarted `up` opens its servers' data with the same ones."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / FILE_NAME
    write_once(path, json.dumps(asdict(ServerLogins.fresh())))
    saved = json.loads(path.read_text())
    return ServerLogins(Login(**saved["redis"]), Login(**saved["nats"]))


def write_private(path: Path, text: str) -> Path:
    """Write ``text`` to a file only its owner may read (a server's config with a password)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.chmod(path, 0o600)  # an older file keeps its mode through O_CREAT
    return path


def write_once(path: Path, text: str) -> None:
    """Create ``path`` (mode 0600) holding ``text`` unless it exists; when two processes race,
    the first file made wins whole (written aside, then linked into place)."""
    if path.exists():
        return
    draft = write_private(path.with_name(f".{path.name}.{os.getpid()}"), text)
    try:
        os.link(draft, path)
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            draft.unlink()
