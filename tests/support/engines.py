"""Checks every engine's tests use: an accepted action, and a refusal that changes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shared.games.base import Game
from shared.games.errors import ErrorCode, RuleError


def act(game: Game, seat: int, kind: str, **fields: Any) -> list[dict[str, Any]]:
    """Apply one action that must be accepted; return its events."""
    return game.apply(seat, {"type": kind, **fields})


def refused(game: Game, seat: int, action: Any, code: ErrorCode) -> str:
    """Assert the action is refused with ``code`` and changes nothing; return the message."""
    before = json.dumps(game.to_dict(), sort_keys=True)
    with pytest.raises(RuleError) as caught:
        game.apply(seat, action)
    assert caught.value.code == code, caught.value.message
    assert json.dumps(game.to_dict(), sort_keys=True) == before
    return caught.value.message
