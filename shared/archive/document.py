"""A finished game as one document: who sat where, the options, the seed and salt, every commit.

The archive keeps the full engine state after each commit, so a replay shows any moment without
an engine and :mod:`shared.archive.verify` can still recompute all of it from the seed. It is
stored as zlib-compressed JSON written by orjson straight from the dataclasses, so encoding a
long game does not stall the archiving process's event loop.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson

FORMAT = 1
#: The name a deleted player's seats carry in archived games (accounts, "DeleteMyAccount").
DELETED_NAME = "Deleted player"


@dataclass
class ArchivedCommit:
    """One commit of the game as it was made."""

    seq: int
    at: float
    #: The seat that acted, None for the server's own commits.
    actor: int | None
    action: dict[str, Any] | None
    events: list[dict[str, Any]]
    state: dict[str, Any]
    #: Seat (as str) -> bot level, for seats a bot played after this commit.
    bots: dict[str, str] = field(default_factory=dict)


@dataclass
class GameArchive:
    """Everything about one finished game of a table; nothing hidden."""

    table_id: str
    game: str
    game_no: int
    seat_count: int
    #: One per seat: {"seat", "player_id", "name", "bot"} as the game started.
    seats: list[dict[str, Any]]
    options: dict[str, Any]
    seed: int
    salt: str
    commitment: str
    commits: list[ArchivedCommit]
    format: int = FORMAT

    @property
    def result(self) -> dict[str, Any]:
        """The game_over event of the last commit ({} if there is none)."""
        events = self.commits[-1].events if self.commits else []
        return next((e for e in events if e.get("type") == "game_over"), {})

    @property
    def ended_at(self) -> float:
        """When the game's last commit was made."""
        return self.commits[-1].at if self.commits else 0.0

    def player_ids(self) -> list[str]:
        """The people of the game (bot seats have no player id)."""
        return [str(seat["player_id"]) for seat in self.seats if seat.get("player_id")]

    def pseudonymise(self, player_id: str, pseudonym: str) -> bool:
        """Replace a player's id and name in the seats; True when the player sat here."""
        changed = False
        for seat in self.seats:
            if seat.get("player_id") == player_id:
                seat.update(player_id=pseudonym, name=DELETED_NAME)
                changed = True
        return changed

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameArchive:
        """The archive of the JSON document :meth:`encode` writes; KeyError/TypeError for a
        document of another shape."""
        fields = dict(data)
        fields["commits"] = [ArchivedCommit(**commit) for commit in fields["commits"]]
        return cls(**fields)

    def encode(self) -> bytes:
        """Compressed bytes for the archive stream."""
        return zlib.compress(orjson.dumps(self, option=orjson.OPT_NON_STR_KEYS), 6)

    @classmethod
    def decode(cls, blob: bytes) -> GameArchive:
        """Inverse of :meth:`encode`."""
        return cls.from_dict(orjson.loads(zlib.decompress(blob)))
