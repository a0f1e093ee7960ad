"""Check a replay against its seed: the proof that a finished game was dealt and played fairly.

The engines are pure and seeded (shared/games/base.py), so the seed alone
fixes every deal and every random choice. This check:

1. recomputes the commitment ``sha256(seed || salt)`` (shared/archive/fairness.py)
   and compares it with the replay's and with the one the ``game_started``
   event published before the first card was dealt;
2. creates the engine from (seat count, options, seed) and compares its state
   with the first commit's (the deal);
3. applies every recorded action to it (a bot's action is recomputed from its
   seeded generator too; a timed-out default and a round's time limit are
   re-derived) and compares the events and the whole state of every commit;
4. checks that the last commit ends the game.

A replay whose cards, actions, seed or salt were changed anywhere fails.
"""

from __future__ import annotations

import json
from typing import Any

from shared.archive.document import ArchivedCommit, GameArchive
from shared.archive.fairness import commitment
from shared.games.base import Game, derived_rng
from shared.games.catalog import CATALOGUE
from shared.games.errors import RuleError, SetupError
from shared.games.registry import bot_levels, engine_class

#: Server commits that change who plays a seat, not the game.
SEAT_EVENTS = ("seat_bot", "seat_reclaimed")
TIMED_OUT, TIME_UP = "timed_out", "time_up"


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON (tuples and lists, int keys and str keys as JSON sees them)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def verify(archive: GameArchive) -> list[str]:
    """Every mismatch found (empty: the replay is what its seed makes)."""
    problems = _check_commitment(archive)
    if archive.game not in CATALOGUE:
        return [*problems, f"unknown game {archive.game!r}"]
    if not archive.commits:
        return [*problems, "the replay has no commits"]
    try:
        game = engine_class(archive.game).new(archive.seat_count, archive.options, archive.seed)
    except SetupError as err:
        return [*problems, f"the engine refuses the replay's seats or options: {err}"]
    first = archive.commits[0]
    if not _same(game.to_dict(), first.state):
        problems.append(f"commit {first.seq}: the deal is not the one seed {archive.seed} makes")
    bots = first.bots
    previous = first
    for commit in archive.commits[1:]:
        try:
            expected = _replay(archive, game, previous, commit, bots)
        except (RuleError, ValueError, KeyError, TypeError, AttributeError) as err:
            problems.append(f"commit {commit.seq}: cannot be replayed: {err}")
            return problems
        if not _same(expected, commit.events):
            problems.append(f"commit {commit.seq}: its events are not what its action makes")
        if not _same(game.to_dict(), commit.state):
            problems.append(f"commit {commit.seq}: its state is not what its action makes")
        bots, previous = commit.bots, commit
    if not game.over:
        problems.append("the replay ends before the game is over")
    return problems


def _check_commitment(archive: GameArchive) -> list[str]:
    problems = []
    try:
        made = commitment(archive.seed, archive.salt)
    except ValueError as err:
        return [f"the seed or salt is malformed: {err}"]
    if made != archive.commitment:
        problems.append("sha256(seed || salt) is not the replay's commitment")
    started = archive.commits[0].events[0] if archive.commits and archive.commits[0].events else {}
    if started.get("type") != "game_started" or started.get("commitment") != made:
        problems.append("the game_started event did not publish sha256(seed || salt)")
    return problems


def _replay(archive: GameArchive, game: Game, previous: ArchivedCommit, commit: ArchivedCommit,
            bots: dict[str, str]) -> list[dict[str, Any]]:
    """Apply the commit to ``game`` the way the server made it; returns the events it makes."""
    kind = commit.events[0].get("type") if commit.events else None
    if commit.actor is not None and commit.action is not None:
        seat = commit.actor
        level = bots.get(str(seat))
        if level is not None and kind != TIMED_OUT:
            bot = bot_levels(archive.game)[level]()
            chosen = bot.choose(game.view(seat), derived_rng(archive.seed, "bot", previous.seq, seat))
            if not _same(chosen, commit.action):
                raise ValueError(f"the bot of seat {seat} would have chosen {chosen}")
        if kind == TIMED_OUT and not _same(game.default_action(seat), commit.action):
            raise ValueError(f"seat {seat}'s clock ran out, but its default action is another")
        events = game.apply(seat, commit.action)
        return [{"type": TIMED_OUT, "seat": seat}, *events] if kind == TIMED_OUT else events
    if kind == TIME_UP:
        round_no = int(commit.events[0]["round"])
        return [{"type": TIME_UP, "round": round_no}, *game.time_up(round_no)]  # type: ignore[attr-defined]
    if len(commit.events) == 1 and kind in SEAT_EVENTS:
        return commit.events
    raise ValueError("a server commit of no known kind")
