"""Signed bearer tokens: the server, never the client, decides who a caller is.

A token is ``base64url(payload).base64url(hmac_sha256(payload))`` with the
player id, display name and expiry in the payload. Any replica holding the
shared secret verifies it without a lookup.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from contextvars import ContextVar
from dataclasses import dataclass

import grpc

from shared.rpc.errors import ServiceError


@dataclass(frozen=True)
class Identity:
    """The authenticated caller of the current request."""

    player_id: str
    name: str
    expires_at: float


_current: ContextVar[Identity | None] = ContextVar("stammtisch_identity", default=None)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenSigner:
    """Issues and verifies tokens with one secret."""

    def __init__(self, secret: str, ttl_seconds: int) -> None:
        self._key = secret.encode()
        self.ttl_seconds = ttl_seconds

    def issue(self, player_id: str, name: str, now: float | None = None) -> tuple[str, Identity]:
        """A new token for the player, valid for the configured time."""
        identity = Identity(player_id, name, (now or time.time()) + self.ttl_seconds)
        payload = json.dumps({"sub": player_id, "name": name, "exp": identity.expires_at},
                             separators=(",", ":")).encode()
        return f"{_b64(payload)}.{_b64(self._sign(payload))}", identity

    def verify(self, token: str, now: float | None = None) -> Identity:
        """The identity in a valid token; UNAUTHENTICATED for anything else."""
        try:
            payload_part, sig_part = token.split(".")
            payload = _unb64(payload_part)
            if not hmac.compare_digest(_unb64(sig_part), self._sign(payload)):
                raise ValueError("bad signature")
            data = json.loads(payload)
            identity = Identity(str(data["sub"]), str(data["name"]), float(data["exp"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise ServiceError(grpc.StatusCode.UNAUTHENTICATED, "invalid token") from exc
        if identity.expires_at < (now or time.time()):
            raise ServiceError(grpc.StatusCode.UNAUTHENTICATED, "token expired; log in again")
        return identity

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()


def bearer_token(metadata: tuple[tuple[str, str | bytes], ...] | None) -> str | None:
    """The token of an ``authorization: Bearer <token>`` metadata entry."""
    for key, value in metadata or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value.removeprefix("Bearer ").strip()
    return None


def set_identity(identity: Identity | None) -> None:
    """Bind the caller for the current request (done by the auth interceptor)."""
    _current.set(identity)


def caller() -> Identity:
    """The authenticated caller; UNAUTHENTICATED when the request carried no token."""
    identity = _current.get()
    if identity is None:
        raise ServiceError(grpc.StatusCode.UNAUTHENTICATED, "missing token: log in first")
    return identity
