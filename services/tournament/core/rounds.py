"""The formats: who is present in a round, how it is seated, and when the tournament ends.

* **Series** (club Skat style): R rounds of G games per table; round 1 at random or
  by rating in snake order, later rounds by the standings avoiding repeat opponents.
* **Knockout**: every round the best ``keep`` people of each table go on; once at most
  ``table_size`` players are left (or the split of those left is one table) they play one
  final table, the last round.

Players enter in round ``first_round`` (1, or the first round not yet seated when
they entered late) and are seated up to ``last_round`` (the round they withdrew
in, when they withdrew; None while they stay).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from services.tournament.core.seating import (
    SeatedTable,
    apart,
    meetings_of,
    random_groups,
    seat_counts_of,
    seat_round,
    snake_groups,
    standings_groups,
    with_forbidden,
)
from services.tournament.core.split import Split, check_sizes, split_tables
from services.tournament.core.standings import (
    DEFAULT_TIE_BREAKS,
    Entrant,
    GameResult,
    Standing,
    advancing,
    standings,
)


class Kind(StrEnum):
    """The two formats."""

    SERIES = "series"
    KNOCKOUT = "knockout"


class FirstSeating(StrEnum):
    """How round 1 is seated."""

    RANDOM = "random"
    RATING = "rating"


@dataclass(frozen=True)
class Format:
    """What the organizer chose, as far as seating and scoring care."""

    kind: Kind
    #: Series: the number of rounds (a knockout runs until its final table).
    rounds: int
    games_per_round: int
    min_size: int
    max_size: int
    table_size: int
    seed: int
    first_seating: FirstSeating = FirstSeating.RANDOM
    #: Knockout: people per table who go on (1 <= keep < min_size).
    keep: int = 1
    duplicate: bool = False
    #: Standings tie-breaks after points, in order (core.standings.TIE_BREAKS).
    tie_breaks: tuple[str, ...] = DEFAULT_TIE_BREAKS
    #: Pairs (a < b) who must not meet at a table: honoured wherever a seating allows.
    forbidden: frozenset[tuple[str, str]] = frozenset()

    def check(self) -> None:
        """ValueError with the reason when the combination cannot be played."""
        check_sizes(self.min_size, self.max_size, self.table_size)
        if self.games_per_round < 1:
            raise ValueError("games per round must be at least 1")
        if self.kind == Kind.SERIES and self.rounds < 1:
            raise ValueError("a series needs at least 1 round")
        if self.kind == Kind.KNOCKOUT and not 1 <= self.keep < self.min_size:
            raise ValueError(f"a knockout keeps 1 to {self.min_size - 1} players per table")


@dataclass(frozen=True)
class Player:
    """A registered player."""

    player_id: str
    rating: float
    #: Registration order (0 first).
    order: int
    first_round: int = 1
    last_round: int | None = None

    def present_in(self, round_no: int) -> bool:
        """Seated in that round (entered by then, not withdrawn before it)."""
        return self.first_round <= round_no and (self.last_round is None or round_no <= self.last_round)


def seed_order(players: Sequence[Player]) -> list[Player]:
    """Best rating first, then earliest registration: round 1's order and the last tie-break."""
    return sorted(players, key=lambda p: (-p.rating, p.order, p.player_id))


def entrants(players: Sequence[Player]) -> list[Entrant]:
    """The players as the standings see them."""
    return [Entrant(p.player_id, rank, p.first_round) for rank, p in enumerate(seed_order(players))]


def table_split(fmt: Format, count: int, knockout_final: bool) -> Split:
    """The tables of a round of ``count`` players (a knockout's final, once they fit one table
    of the preferred size: that one table, bots filling it up to the game's least seats)."""
    if knockout_final:
        size = max(count, fmt.min_size)
        return Split((size,), size - count)
    return split_tables(count, fmt.min_size, fmt.max_size, fmt.table_size)


def current_standings(fmt: Format, players: Sequence[Player], rounds: Sequence[Sequence[SeatedTable]],
                      results: Sequence[GameResult]) -> list[Standing]:
    """Standings from everything played so far (a knockout ranks by the last round reached, then
    the place at the last table played)."""
    return standings(entrants(players), results, fmt.games_per_round, duplicate=fmt.duplicate,
                     knockout=rounds if fmt.kind == Kind.KNOCKOUT else None, tie_breaks=fmt.tie_breaks)


def plan_round(fmt: Format, players: Sequence[Player], rounds: Sequence[Sequence[SeatedTable]],
               results: Sequence[GameResult]) -> list[SeatedTable]:
    """The seating of the next round (number ``len(rounds) + 1``); empty when nobody is left."""
    number = len(rounds) + 1
    by_seed = [p.player_id for p in seed_order(players) if p.present_in(number)]
    counts = seat_counts_of(table.seats for tables in rounds for table in tables)
    if fmt.kind == Kind.KNOCKOUT and rounds:
        seed_rank = {entrant.player_id: entrant.seed_rank for entrant in entrants(players)}
        going_on = set(advancing(rounds[-1], results, number - 1, fmt.keep, seed_rank, fmt.duplicate))
        ranked = [player for player in _ranked(fmt, players, rounds, results) if player in going_on]
        present = [player for player in ranked if player in set(by_seed)]
        split = table_split(fmt, len(present), len(present) <= fmt.table_size)
        return seat_round(apart(snake_groups(present, split), fmt.forbidden), split, counts)
    if not rounds:
        final = fmt.kind == Kind.KNOCKOUT and len(by_seed) <= fmt.table_size
        split = table_split(fmt, len(by_seed), final)
        groups = (snake_groups(by_seed, split) if fmt.first_seating == FirstSeating.RATING
                  else random_groups(by_seed, split, fmt.seed))
        return seat_round(apart(groups, fmt.forbidden), split, counts)
    ranked = [player for player in _ranked(fmt, players, rounds, results) if player in set(by_seed)]
    split = table_split(fmt, len(ranked), False)
    met = with_forbidden(meetings_of(table.seats for tables in rounds for table in tables), fmt.forbidden)
    return seat_round(standings_groups(ranked, split, met), split, counts)


def _ranked(fmt: Format, players: Sequence[Player], rounds: Sequence[Sequence[SeatedTable]],
            results: Sequence[GameResult]) -> list[str]:
    return [line.player_id for line in current_standings(fmt, players, rounds, results)]


def finished(fmt: Format, rounds: Sequence[Sequence[SeatedTable]]) -> bool:
    """Whether the last seated round is the last one (its games done is the caller's to check)."""
    if not rounds:
        return False
    if fmt.kind == Kind.KNOCKOUT:
        return len(rounds[-1]) <= 1
    return len(rounds) >= fmt.rounds
