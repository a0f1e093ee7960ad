"""The 19-round schedule: hand sizes 1..10..1 and the six special rounds."""

from __future__ import annotations

from enum import StrEnum

LAST_ROUND = 19


class RoundKind(StrEnum):
    """What makes a round special (FAQ glossary: six special rounds)."""

    NORMAL = "normal"
    TRUMP_CHOICE = "trump_choice"
    NO_TRUMP = "no_trump"
    BLIND = "blind"
    FOREHEAD = "forehead"


_SPECIAL: dict[int, RoundKind] = {
    5: RoundKind.TRUMP_CHOICE,
    15: RoundKind.TRUMP_CHOICE,
    7: RoundKind.NO_TRUMP,
    13: RoundKind.NO_TRUMP,
    10: RoundKind.BLIND,
    19: RoundKind.FOREHEAD,
}


def hand_size(round_no: int) -> int:
    """Cards per seat (and tricks) in a round: 1, 2, ..., 10, ..., 2, 1."""
    return min(round_no, LAST_ROUND + 1 - round_no)


def round_kind(round_no: int) -> RoundKind:
    """The special rule of a round, if any."""
    return _SPECIAL.get(round_no, RoundKind.NORMAL)


def turns_up_trump(round_no: int) -> bool:
    """Whether the round's trump is the turned-up top card of the stock."""
    return round_kind(round_no) not in (RoundKind.TRUMP_CHOICE, RoundKind.NO_TRUMP)
