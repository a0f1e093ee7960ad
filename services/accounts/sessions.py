"""Refresh tokens: long-lived, opaque, stored hashed, rotated on every use, revocable.

A refresh token is ``<login id>.<secret>``: the login id (32 hex digits)
names one login's *family* of tokens, the secret is 256 random bits. Only
the SHA-256 of a token is stored::

    <prefix>:refresh:{<login>}        hash  player_id, current (hash of the one valid token), revoked
    <prefix>:refresh:{<login>}:used   set   hashes of the family's used tokens
    <prefix>:logins:<player_id>       set   the player's login ids (for "log out everywhere")

Using a token (one Lua script) makes the next one current and the used one
void. Presenting a used token again means someone else has a copy (a thief
or the owner, and the other one is already ahead): the whole family is
revoked, so both have to log in again. Families expire
``STAMMTISCH_REFRESH_TTL`` after their last use; accounts never do.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass

import grpc

from services.accounts.secrets_hash import token_hash
from shared.infra.runtime import Runtime
from shared.rpc.errors import ServiceError

_TOKEN = re.compile(r"([0-9a-f]{32})\.([A-Za-z0-9_-]{43})")

_ROTATE = """
-- KEYS: family, used   ARGV: presented hash, next hash, ttl_ms
if redis.call('EXISTS', KEYS[1]) == 0 then return {'unknown'} end
if redis.call('HGET', KEYS[1], 'revoked') == '1' then return {'revoked'} end
if redis.call('HGET', KEYS[1], 'current') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'current', ARGV[2])
  redis.call('SADD', KEYS[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return {'ok', redis.call('HGET', KEYS[1], 'player_id')}
end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], 'revoked', '1')
  return {'reused'}
end
return {'unknown'}
"""


def _refused(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAUTHENTICATED, message)


@dataclass(frozen=True)
class Refresh:
    """A refresh token as handed out."""

    token: str
    player_id: str
    expires_at: float


def _login_of(token: str) -> str:
    match = _TOKEN.fullmatch(token)
    if match is None:
        raise _refused("not a refresh token; log in again")
    return match.group(1)


class Sessions:
    """Refresh-token families of one deployment."""

    def __init__(self, runtime: Runtime, ttl_seconds: int) -> None:
        self.runtime = runtime
        self.redis = runtime.redis
        self.ttl_seconds = ttl_seconds
        self._rotate = self.redis.register_script(_ROTATE)

    def family_key(self, login: str) -> str:
        """One login's family hash."""
        return self.runtime.key("refresh", "{" + login + "}")

    def used_key(self, login: str) -> str:
        """The used tokens of one login."""
        return self.runtime.key("refresh", "{" + login + "}", "used")

    def logins_key(self, player_id: str) -> str:
        """A player's login ids."""
        return self.runtime.key("logins", player_id)

    def _new_token(self, login: str) -> str:
        return f"{login}.{secrets.token_urlsafe(32)}"

    async def open(self, player_id: str) -> Refresh:
        """A new login (family) for the player and its first refresh token."""
        login = secrets.token_hex(16)
        token = self._new_token(login)
        # The family and the player's login set are in different Redis Cluster slots: the set
        # first, so that revoking every login never misses a family that exists.
        await self.redis.sadd(self.logins_key(player_id), login)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.family_key(login), mapping={"player_id": player_id, "current": token_hash(token),
                                                       "revoked": "0"})
            pipe.expire(self.family_key(login), self.ttl_seconds)
            await pipe.execute()
        return Refresh(token, player_id, time.time() + self.ttl_seconds)

    async def rotate(self, token: str) -> Refresh:
        """The next token of the presented one's family; UNAUTHENTICATED when it is not current."""
        login = _login_of(token)
        following = self._new_token(login)
        reply = await self._rotate(keys=[self.family_key(login), self.used_key(login)],
                                   args=[token_hash(token), token_hash(following), self.ttl_seconds * 1000])
        status = reply[0].decode()
        if status == "reused":
            raise _refused("this refresh token was already used: every token of its login is revoked; "
                           "log in again")
        if status != "ok":
            raise _refused("refresh token unknown, expired or revoked; log in again")
        return Refresh(following, reply[1].decode(), time.time() + self.ttl_seconds)

    async def revoke(self, token: str, everywhere: bool) -> None:
        """Revoke the token's login, or every login of its player."""
        login = _login_of(token)
        owner = await self.redis.hget(self.family_key(login), "player_id")
        if owner is None:
            return  # unknown or expired: nothing left to revoke
        logins = [raw.decode() for raw in await self.redis.smembers(self.logins_key(owner.decode()))] \
            if everywhere else [login]
        await self._revoke(owner.decode(), logins)

    async def revoke_all(self, player_id: str) -> None:
        """Revoke every login of a player (account deletion)."""
        logins = [raw.decode() for raw in await self.redis.smembers(self.logins_key(player_id))]
        await self._revoke(player_id, logins)
        await self.redis.delete(self.logins_key(player_id))

    async def _revoke(self, player_id: str, logins: list[str]) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            for login in logins:
                pipe.hset(self.family_key(login), "revoked", "1")
                pipe.expire(self.family_key(login), self.ttl_seconds)
                pipe.srem(self.logins_key(player_id), login)
            await pipe.execute()
