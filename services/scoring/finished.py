"""A finished game as scoring sees it, read from a JetStream result message.

The publisher (``shared/tables/announce.py``) sends the engine's ``game_over``
event with the table's meta at that commit. Everything is checked here, once,
so storage and ratings only ever see well-formed results.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any

from shared.games.catalog import CATALOGUE

MAX_ID = 128


class BadResult(ValueError):
    """A result message that can never be recorded (retrying will not help)."""


@dataclass(frozen=True)
class FinishedGame:
    """One game_over of one table."""

    #: The publisher's Nats-Msg-Id ("table:seq:index"): one finished game, however often sent.
    result_id: str
    table_id: str
    seq: int
    game: str
    game_no: int
    #: Player id per seat, padded with "" to one entry per score (bots, the card monster).
    player_ids: list[str]
    scores: list[int]
    winners: list[int]
    at: float

    def people(self) -> list[int]:
        """The ranked seats: those a player sat at. A seat a bot took over after its player left still
        counts for that player (leaving dodges no loss); bot-only seats and seats no person holds have
        no player id."""
        return [seat for seat, player in enumerate(self.player_ids) if player]

    def to_json(self) -> str:
        """Compact JSON for storage."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str | bytes) -> FinishedGame:
        """Inverse of :meth:`to_json`."""
        return cls(**json.loads(raw))

    @classmethod
    def from_message(cls, result_id: str, data: bytes) -> FinishedGame:
        """Parse and check a result message; BadResult for anything malformed."""
        try:
            payload = json.loads(data)
            event = payload["event"]
            game = cls(result_id=result_id, table_id=payload["table_id"], seq=payload["seq"],
                       game=payload["game"], game_no=payload["game_no"], player_ids=payload["players"],
                       scores=event["scores"], winners=event["winners"], at=payload["at"])
            kind = event["type"]
        except (ValueError, KeyError, TypeError) as exc:
            raise BadResult(f"unreadable result: {exc!r}") from exc
        if kind != "game_over":
            raise BadResult(f"not a game result: {kind!r}")
        game._check()
        missing = len(game.scores) - len(game.player_ids)
        return replace(game, player_ids=[*game.player_ids, *[""] * missing])

    def _check(self) -> None:
        ids = (self.result_id, self.table_id)
        if not all(isinstance(i, str) and 0 < len(i) <= MAX_ID for i in ids):
            raise BadResult(f"bad result or table id: {ids!r}")
        if not all(isinstance(seq, list) for seq in (self.player_ids, self.scores, self.winners)):
            raise BadResult("players, scores and winners must be lists")
        if self.game not in CATALOGUE:
            raise BadResult(f"unknown game {self.game!r}")
        if not _ints(self.seq, self.game_no, *self.scores, *self.winners):
            raise BadResult("seq, game_no, scores and winners must be integers")
        if not isinstance(self.at, int | float):
            raise BadResult(f"bad time {self.at!r}")
        if not all(isinstance(p, str) and len(p) <= MAX_ID for p in self.player_ids):
            raise BadResult("player ids must be strings")
        if len(self.player_ids) > len(self.scores) or not self.scores:
            raise BadResult(f"{len(self.player_ids)} seats for {len(self.scores)} scores")
        if any(not 0 <= seat < len(self.scores) for seat in self.winners):
            raise BadResult(f"winner seats {self.winners} out of range")
        people = [p for p in self.player_ids if p]
        if len(people) != len(set(people)):
            raise BadResult("a player holds two seats")


def _ints(*values: Any) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)
