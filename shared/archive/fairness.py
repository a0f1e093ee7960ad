"""The seed commitment that makes a deal provably fair.

At a game's start the server publishes ``commitment(seed, salt)`` in the
``game_started`` event and keeps seed and salt secret; the replay of the
finished game reveals both. The exact bytes hashed, so that any client can
recompute it::

    sha256( ascii(decimal seed) || salt )      salt: 32 random bytes, shown as 64 hex digits

e.g. seed 42 and salt 00..00 hash the 2 + 32 bytes ``b"42" + bytes(32)``.
The salt keeps the seed from being guessed from the commitment (seeds are
only 62 bits); its fixed length keeps the boundary between the two unambiguous.
"""

from __future__ import annotations

import hashlib
import secrets

SALT_BYTES = 32


def new_salt() -> str:
    """A fresh salt as 64 lowercase hex digits."""
    return secrets.token_hex(SALT_BYTES)


def commitment(seed: int, salt_hex: str) -> str:
    """sha256(decimal seed || salt bytes) as lowercase hex; ValueError for a malformed salt."""
    salt = bytes.fromhex(salt_hex)
    if len(salt) != SALT_BYTES or seed < 0:
        raise ValueError(f"a salt is {SALT_BYTES} bytes and a seed is >= 0")
    return hashlib.sha256(str(seed).encode("ascii") + salt).hexdigest()
