"""Whether a Redis or NATS admits the login its URL carries: a process that starts with a refused
login says so and stops (never a traceback, never NATS's endless reconnecting), and `stammtisch
up` uses a configured server only when it admits its login."""

from __future__ import annotations

import asyncio

import nats
import nats.errors
import redis.asyncio as aioredis
import redis.exceptions
from nats.protocol.parser import AUTHORIZATION_VIOLATION

from shared.infra.credentials import login_of, without_login


class LoginRefused(Exception):
    """A server refused the login of its URL (or wants one the URL does not carry); ``reason``
    is the server's own word for it."""

    def __init__(self, server: str, url: str, reason: str, variables: str) -> None:
        super().__init__(f"{server} at {without_login(url)} refused the login: {reason} (check {variables})")
        self.reason = reason


async def check_redis_login(url: str, timeout: float = 3.0) -> None:
    """Return when the Redis at ``url`` answers PING with the URL's login; LoginRefused when it
    refuses it; redis-py's error when it cannot be reached."""
    client = aioredis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        await client.ping()
    except (redis.exceptions.AuthenticationError, redis.exceptions.NoPermissionError) as err:
        raise LoginRefused("Redis", url, str(err), "STAMMTISCH_REDIS_USERNAME/STAMMTISCH_REDIS_PASSWORD "
                           "or REDIS_URL") from None
    finally:
        await client.aclose()


async def check_nats_login(servers: list[str], timeout: float = 3.0) -> None:
    """Return when a NATS of ``servers`` accepts a connection with their login; LoginRefused when
    it refuses it; nats-py's or the socket's error when none can be reached."""
    login = login_of(",".join(servers))

    async def quiet(_error: Exception) -> None:
        """nats-py would log the failed attempt with a traceback; the refusal says it once."""

    try:
        client = await nats.connect(servers, connect_timeout=timeout, allow_reconnect=False,
                                    max_reconnect_attempts=0, error_cb=quiet,
                                    user=login.username if login else None,
                                    password=login.password if login else None)
    except nats.errors.Error as err:
        if AUTHORIZATION_VIOLATION not in str(err).lower():
            raise
        raise LoginRefused("NATS", ",".join(servers), str(err),
                           "STAMMTISCH_NATS_USER/STAMMTISCH_NATS_PASSWORD or NATS_URL") from None
    await client.close()


def redis_refusal(url: str) -> str | None:
    """None when the Redis at ``url`` admits the URL's login; else why not (refused, or no Redis)."""
    try:
        asyncio.run(check_redis_login(url))
    except LoginRefused as refused:
        return refused.reason
    except redis.exceptions.RedisError as err:
        return str(err)
    return None


def nats_refusal(url: str) -> str | None:
    """None when the NATS at ``url`` (a comma-separated list for a cluster) admits the URL's
    login; else why not (refused, or no NATS)."""
    try:
        asyncio.run(check_nats_login([one.strip() for one in url.split(",") if one.strip()]))
    except LoginRefused as refused:
        return refused.reason
    except (nats.errors.Error, OSError, TimeoutError) as err:
        return str(err) or type(err).__name__
    return None
