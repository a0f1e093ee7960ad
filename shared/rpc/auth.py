"""Signed bearer tokens: the server, never the client, decides who a caller is.

A token is a standard JWT (HS256, made and read with PyJWT) whose ``sub`` is
the player id, with ``name``, ``iat`` and ``exp``. Any replica holding the
shared secret verifies it without a lookup. The header's ``kid`` is a short
fingerprint of the secret that signed it, so the secret can be rotated: the
server signs with the current secret and still accepts tokens of the
previous one until they expire.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import grpc
import jwt

from shared.config import Settings
from shared.ids import IdError, check_player_id
from shared.rpc.errors import ServiceError

ALGORITHM = "HS256"
#: RFC 7518 3.2: an HS256 key is at least as long as the hash (32 bytes).
MIN_SECRET_BYTES = 32
#: Clock skew tolerated between replicas, in seconds.
LEEWAY_SECONDS = 30
_REQUIRED = ("sub", "exp", "iat")
#: Tokens verified lately, by their exact text: a client sends the same token on every call.
VERIFIED_CACHE = 10_000


@dataclass(frozen=True)
class Identity:
    """The authenticated caller of the current request."""

    player_id: str
    name: str
    expires_at: float


_current: ContextVar[Identity | None] = ContextVar("stammtisch_identity", default=None)


def key_id(secret: str) -> str:
    """A short fingerprint of a secret for the ``kid`` header; it reveals nothing usable."""
    return hashlib.sha256(b"stammtisch-kid:" + secret.encode()).hexdigest()[:16]


def check_secret(secret: str, variable: str = "STAMMTISCH_TOKEN_SECRET") -> str:
    """A secret long enough for HS256, else ValueError naming the variable."""
    if len(secret.encode()) < MIN_SECRET_BYTES:
        raise ValueError(
            f"{variable} must be at least {MIN_SECRET_BYTES} bytes; make one with "
            "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'")
    return secret


def _unauthenticated(message: str = "invalid token; log in again") -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAUTHENTICATED, message)


class TokenSigner:
    """Issues tokens with the current secret; verifies tokens of the current or previous one."""

    def __init__(self, secret: str, ttl_seconds: int, previous: str = "") -> None:
        self._current = (key_id(check_secret(secret)), secret)
        self._keys = {key_id(secret): secret}
        if previous:
            self._keys[key_id(check_secret(previous, "STAMMTISCH_TOKEN_SECRET_PREVIOUS"))] = previous
        self.ttl_seconds = ttl_seconds
        self._verified: OrderedDict[str, Identity] = OrderedDict()

    @classmethod
    def from_settings(cls, settings: Settings) -> TokenSigner:
        """The signer of a deployment: its current and previous secret and token lifetime."""
        return cls(settings.token_secret, settings.token_ttl_seconds, settings.token_secret_previous)

    def issue(self, player_id: str, name: str, now: float | None = None,
              ttl_seconds: int | None = None) -> tuple[str, Identity]:
        """A new token for the player, valid for ``ttl_seconds`` (default: the configured time)."""
        issued = int(time.time() if now is None else now)
        expires = issued + (self.ttl_seconds if ttl_seconds is None else ttl_seconds)
        identity = Identity(check_player_id(player_id), name, float(expires))
        kid, secret = self._current
        token = jwt.encode({"sub": player_id, "name": name, "iat": issued, "exp": expires},
                           secret, algorithm=ALGORITHM, headers={"kid": kid})
        return token, identity

    def verify(self, token: str, now: float | None = None) -> Identity:
        """The identity in a valid token; UNAUTHENTICATED for anything else.

        A token verified before (the very same text) is only checked for expiry again.
        """
        now = time.time() if now is None else now
        identity = self._verified.get(token)
        if identity is None:
            identity = self._decode(token)
            self._verified[token] = identity
            if len(self._verified) > VERIFIED_CACHE:
                self._verified.popitem(last=False)
        else:
            self._verified.move_to_end(token)
        if identity.expires_at <= now - LEEWAY_SECONDS:
            raise _unauthenticated("token expired; log in again")
        return identity

    def _decode(self, token: str) -> Identity:
        try:
            kid = jwt.get_unverified_header(token).get("kid")
            secret = self._keys.get(kid) if isinstance(kid, str) else None
            if secret is None:
                raise _unauthenticated()
            claims = jwt.decode(token, secret, algorithms=[ALGORITHM], leeway=LEEWAY_SECONDS,
                                options={"require": list(_REQUIRED), "verify_exp": False})
        except jwt.PyJWTError as exc:
            raise _unauthenticated() from exc
        return _identity(claims)


def _identity(claims: dict[str, Any]) -> Identity:
    """Check the claims PyJWT leaves loose: ``exp`` a finite number (not NaN, Infinity or a
    string), ``sub`` a player id of the one shape, ``name`` a string."""
    exp, name = claims["exp"], claims.get("name", "")
    if isinstance(exp, bool) or not isinstance(exp, int | float) or not math.isfinite(exp):
        raise _unauthenticated()
    if not isinstance(name, str):
        raise _unauthenticated()
    try:
        player_id = check_player_id(claims["sub"])
    except IdError as exc:
        raise _unauthenticated() from exc
    return Identity(player_id, name, float(exp))


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
