"""Device secrets are kept only as salted scrypt hashes, compared in constant time.

scrypt (RFC 7914, in hashlib) with n=2**14, r=8, p=1 is memory- and
time-hard: cheap for one login, expensive for anyone trying secrets against
a stolen database. It runs in a thread so a login does not stall the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets

SCRYPT_N, SCRYPT_R, SCRYPT_P = 2 ** 14, 8, 1
SALT_BYTES = 16


def _scrypt(secret: str, salt: bytes) -> bytes:
    return hashlib.scrypt(secret.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32)


async def hash_secret(secret: str) -> tuple[bytes, bytes]:
    """(salt, hash) of a new secret."""
    salt = secrets.token_bytes(SALT_BYTES)
    return salt, await asyncio.to_thread(_scrypt, secret, salt)


async def matches(secret: str, salt: bytes, stored: bytes) -> bool:
    """True when the secret hashes to ``stored`` (constant-time comparison)."""
    return hmac.compare_digest(await asyncio.to_thread(_scrypt, secret, salt), stored)


def token_hash(token: str) -> str:
    """The stored form of a high-entropy token (a refresh token): its SHA-256, hex. 256 random bits
    need no slow hash: nobody can guess one back from it, and the lookup stays one key."""
    return hashlib.sha256(token.encode()).hexdigest()
