"""Rule refusals: every refused action raises :class:`RuleError` with one code.

The codes and their precedence are the contract of the rules docs: when several
codes apply, the one listed first here wins. A refused action changes nothing.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Why an action was refused, in precedence order (first applicable wins)."""

    INVALID_ACTION = "INVALID_ACTION"
    GAME_OVER = "GAME_OVER"
    WRONG_PHASE = "WRONG_PHASE"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    CARD_NOT_IN_HAND = "CARD_NOT_IN_HAND"
    STALE = "STALE"
    MUST_FOLLOW = "MUST_FOLLOW"
    NO_MATCH = "NO_MATCH"
    NOT_ALLOWED = "NOT_ALLOWED"


class RuleError(Exception):
    """An action the rules refuse; carries the code and a message for people."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message


class SetupError(ValueError):
    """A game that cannot be created: bad seat count, options or explicit deal."""
