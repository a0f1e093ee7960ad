"""Accounts and their devices in the AOF Redis, kept without TTL.

Keys (all without expiry: a TTL never ends an account)::

    <prefix>:player:<player_id>      hash  name, kind "device", created_at   (guests: same hash, with TTL)
    <prefix>:device:<sha256(device_id)>  hash  player_id, device_id, salt, hash, created_at, last_login_at
    <prefix>:devices:<player_id>     set   the device keys of the player

The device key is a hash of the device id, so any id the app chose is a
safe key. Creating a device is one Lua script on the device key that fails
when the device exists, so two first logins of one device at once make one
player. The player's hash and device set live in other Redis Cluster slots,
so they are written right after; a login that finds the device but not its
player's name (the creator died in between) writes them again.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import grpc

from services.accounts.secrets_hash import hash_secret, matches
from shared.ids import new_player_id
from shared.infra.runtime import Runtime
from shared.rpc.errors import ServiceError

_CREATE = """
-- KEYS: device   ARGV: player_id, device_id, salt, hash, now
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'player_id', ARGV[1], 'device_id', ARGV[2], 'salt', ARGV[3],
           'hash', ARGV[4], 'created_at', ARGV[5], 'last_login_at', ARGV[5])
return 1
"""


@dataclass(frozen=True)
class Login:
    """Who a device login is."""

    player_id: str
    name: str
    created: bool


class Accounts:
    """Device accounts of one deployment."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.redis = runtime.redis
        self._create = self.redis.register_script(_CREATE)

    def player_key(self, player_id: str) -> str:
        """The player's hash (the lobby's and scoring's name lookup reads it too)."""
        return self.runtime.key("player", player_id)

    def device_key(self, device_id: str) -> str:
        """A device's hash, by a digest of its id."""
        return self.runtime.key("device", hashlib.sha256(device_id.encode()).hexdigest())

    def devices_key(self, player_id: str) -> str:
        """The set of a player's device keys."""
        return self.runtime.key("devices", player_id)

    async def login(self, device_id: str, secret: str, name: str) -> Login:
        """The device's player, created on first use; UNAUTHENTICATED for a wrong secret."""
        key = self.device_key(device_id)
        for _attempt in range(3):
            stored = await self.redis.hgetall(key)
            if stored:
                if not await matches(secret, stored[b"salt"], stored[b"hash"]):
                    raise ServiceError(grpc.StatusCode.UNAUTHENTICATED,
                                       "this device is known with another secret")
                player_id = stored[b"player_id"].decode()
                await self.redis.hset(key, "last_login_at", f"{time.time():.3f}")
                known = await self.name(player_id)
                if not known:  # its creator died before writing the player
                    await self._add_player(player_id, key, name, stored[b"created_at"].decode())
                return Login(player_id, known or name, created=False)
            player_id = new_player_id()
            salt, digest = await hash_secret(secret)
            now = f"{time.time():.3f}"
            if await self._create(keys=[key], args=[player_id, device_id, salt, digest, now]):
                await self._add_player(player_id, key, name, now)
                return Login(player_id, name, created=True)
        raise ServiceError(grpc.StatusCode.ABORTED, "the device was being created concurrently; retry")

    async def _add_player(self, player_id: str, device_key: str, name: str, created_at: str) -> None:
        """The player's hash (no TTL: a device account stays) and its device set, each kept by a
        replica before the login is answered."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(self.player_key(player_id), mapping={"name": name, "kind": "device",
                                                           "created_at": created_at})
            pipe.persist(self.player_key(player_id))
            pipe.sadd(self.devices_key(player_id), device_key)
            await pipe.execute()
        for key in (device_key, self.player_key(player_id), self.devices_key(player_id)):
            await self.runtime.replicas.after(key)

    async def name(self, player_id: str) -> str:
        """The player's display name ("" for an unknown player)."""
        raw = await self.redis.hget(self.player_key(player_id), "name")
        return raw.decode() if raw else ""

    async def exists(self, player_id: str) -> bool:
        """True while the player's account (or guest login) is there."""
        return bool(await self.redis.exists(self.player_key(player_id)))

    async def is_device(self, player_id: str) -> bool:
        """True for a device account (guests have no ``kind``)."""
        return await self.redis.hget(self.player_key(player_id), "kind") == b"device"

    async def rename(self, player_id: str, name: str) -> None:
        """Change the display name (a guest's record keeps its TTL)."""
        await self.redis.hset(self.player_key(player_id), "name", name)

    async def account(self, player_id: str) -> dict[str, str]:
        """The player's record, for an export."""
        stored = await self.redis.hgetall(self.player_key(player_id))
        return {key.decode(): value.decode() for key, value in stored.items()}

    async def devices(self, player_id: str) -> list[dict[str, str]]:
        """The player's devices without their secrets' hashes, for an export."""
        keys = [raw.decode() for raw in await self.redis.smembers(self.devices_key(player_id))]
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.hmget(key, "device_id", "created_at", "last_login_at")
            found = await pipe.execute()
        return sorted(({"device_id": d.decode(), "created_at": c.decode(), "last_login_at": last.decode()}
                       for d, c, last in found if d), key=lambda device: device["created_at"])

    async def delete(self, player_id: str) -> None:
        """Remove the account and every device of it."""
        keys = [raw.decode() for raw in await self.redis.smembers(self.devices_key(player_id))]
        await self.redis.delete(self.player_key(player_id), self.devices_key(player_id), *keys)
