"""Points per game, standings and knockout advancement, always recomputed from the results.

The rule is stated once in :mod:`services.tournament.core` (and in the proto and
README): placement points (n - place) / (n - 1) with shared places for ties,
or the duplicate comparison; late entries are credited 1/2 per missed game;
tie-breaks are game points, games won, then the seeding order; a knockout ranks
by the last round reached and the place at the last table first. Points are exact
fractions, so two directors recomputing the same results agree to the last bit
and ties are real ties.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from services.tournament.core.seating import BOT, SeatedTable

#: A late entrant's points for each game of the rounds they missed (the mean of a game's points).
LATE_ENTRY_POINTS = Fraction(1, 2)
#: The tie-breaks an organizer may order (after points; higher is better for each): the sum of
#: final totals, games won, the best final total of one game, and Buchholz (the points of each
#: opponent, once per game played together).
TIE_BREAKS = ("game_points", "wins", "best_game", "opponents_points")
#: The order unless the organizer chose one.
DEFAULT_TIE_BREAKS = ("game_points", "wins")
#: Tie-breaks an organizer may list at most.
MAX_TIE_BREAKS = len(TIE_BREAKS)


def check_tie_breaks(names: Sequence[str]) -> tuple[str, ...]:
    """The organizer's order (empty: the default); ValueError naming what is wrong."""
    if not names:
        return DEFAULT_TIE_BREAKS
    unknown = [name for name in names if name not in TIE_BREAKS]
    if unknown:
        raise ValueError(f"unknown tie-break {unknown[0]!r}; choose from {', '.join(TIE_BREAKS)}")
    if len(set(names)) != len(names):
        raise ValueError("a tie-break is listed twice")
    return tuple(names)


@dataclass(frozen=True)
class GameResult:
    """One finished game of one tournament table."""

    round: int
    table: int
    #: 1..games per round: the game's place in the table's series (also its seed's).
    game: int
    #: Player id per seat, :data:`BOT` for a seat only a bot played.
    seats: tuple[str, ...]
    #: Final totals per seat.
    scores: tuple[int, ...]


@dataclass(frozen=True)
class Entrant:
    """A registered player as the standings need them."""

    player_id: str
    #: Position in the seeding order (rating, then registration): the last tie-break.
    seed_rank: int
    #: The first round the player is seated in (1 unless they entered late).
    first_round: int = 1


@dataclass
class Standing:
    """One player's line in the standings."""

    player_id: str
    points: Fraction = Fraction(0)
    game_points: int = 0
    wins: int = 0
    games: int = 0
    #: Knockout: the last round the player was seated in (0 in a series: not a criterion).
    reached: int = 0
    #: Knockout: the place at the table of that round (1 best; 0 in a series: not a criterion).
    last_place: int = 0
    seed_rank: int = 0
    rank: int = 0
    round_points: dict[int, Fraction] = field(default_factory=dict)
    #: The highest final total of one game (0 before any game).
    best_game: int = 0
    #: Buchholz: each opponent's points, once per game played together (counted only when
    #: the tournament's tie-breaks name it).
    opponents_points: Fraction = Fraction(0)

    def tie_break(self, name: str) -> int | Fraction:
        """The value of one named tie-break (:data:`TIE_BREAKS`), higher is better."""
        value: int | Fraction = getattr(self, name)
        return value

    def sort_key(self, tie_breaks: Sequence[str] = DEFAULT_TIE_BREAKS) -> tuple[object, ...]:
        """Best first when sorted ascending: (knockout) round reached and place there, points,
        the tie-breaks in order, then the seeding order."""
        return (-self.reached, self.last_place, -self.points,
                *(-self.tie_break(name) for name in tie_breaks), self.seed_rank)


def places(scores: Sequence[int]) -> list[Fraction]:
    """Each seat's place: 1 + seats with a higher total; tied seats share the mean place."""
    result = []
    for score in scores:
        higher = sum(1 for other in scores if other > score)
        tied = sum(1 for other in scores if other == score)
        result.append(Fraction(2 * higher + tied + 1, 2))
    return result


def placement_points(scores: Sequence[int]) -> list[Fraction]:
    """(n - place) / (n - 1) per seat: 1 for first, 0 for last, at any table size."""
    n = len(scores)
    if n < 2:
        return [Fraction(1)] * n
    return [(n - place) / (n - 1) for place in places(scores)]


def duplicate_points(result: GameResult, others: Sequence[GameResult]) -> list[Fraction]:
    """Per seat, the share of the same seat at the ``others`` (same deal) it beat; ties half.

    Without any other table the placement points stand.
    """
    if not others:
        return placement_points(result.scores)
    points = []
    for seat, score in enumerate(result.scores):
        rivals = [other.scores[seat] for other in others]
        beaten = sum(1 for rival in rivals if rival < score)
        tied = sum(1 for rival in rivals if rival == score)
        points.append(Fraction(2 * beaten + tied, 2 * len(rivals)))
    return points


def seat_scores(scores: Sequence[int], seats: int) -> tuple[int, ...]:
    """The final totals of a table's ``seats`` seats from a game over's ``scores``, which may go
    on with positions no seat holds (a card monster that the game plays itself, listed last):
    those never count for a place, as they never win. ValueError for fewer totals than seats."""
    if len(scores) < seats:
        raise ValueError(f"{len(scores)} final totals for {seats} seats")
    return tuple(int(score) for score in scores[:seats])


#: (round, table, game) of a result.
ResultKey = tuple[int, int, int]


def game_points_of(results: Sequence[GameResult], duplicate: bool) -> dict[ResultKey, list[Fraction]]:
    """Points per seat of every result, keyed by (round, table, game)."""
    deals: dict[tuple[int, int, int], list[GameResult]] = defaultdict(list)
    for result in results:
        deals[(result.round, result.game, len(result.seats))].append(result)
    points = {}
    for result in results:
        key = (result.round, result.table, result.game)
        if duplicate:
            others = [other for other in deals[(result.round, result.game, len(result.seats))]
                      if other.table != result.table]
            points[key] = duplicate_points(result, others)
        else:
            points[key] = placement_points(result.scores)
    return points


def won(scores: Sequence[int], seat: int) -> bool:
    """A game is won by every seat with the highest final total (a shared first place counts)."""
    return scores[seat] == max(scores)


def standings(entrants: Sequence[Entrant], results: Iterable[GameResult], games_per_round: int,
              *, duplicate: bool = False,
              knockout: Sequence[Sequence[SeatedTable]] | None = None,
              tie_breaks: Sequence[str] = DEFAULT_TIE_BREAKS) -> list[Standing]:
    """The standings, best first: points, then ``tie_breaks`` in order (the seeding order settles
    every full tie). ``knockout``: the seated rounds of a knockout, which ranks by the last round
    reached and the place at the last table played first. A result counts once per (round,
    table, game)."""
    unique = list({(r.round, r.table, r.game): r for r in results}.values())
    lines = {entrant.player_id: Standing(
                 entrant.player_id, points=LATE_ENTRY_POINTS * (entrant.first_round - 1) * games_per_round,
                 seed_rank=entrant.seed_rank)
             for entrant in entrants}
    points = game_points_of(unique, duplicate)
    for result in unique:
        earned = points[(result.round, result.table, result.game)]
        for seat, player in enumerate(result.seats):
            line = lines.get(player) if player != BOT else None
            if line is None:
                continue
            line.points += earned[seat]
            line.round_points[result.round] = line.round_points.get(result.round, Fraction(0)) + earned[seat]
            line.game_points += result.scores[seat]
            total = result.scores[seat]
            line.best_game = total if not line.games else max(line.best_game, total)
            line.wins += won(result.scores, seat)
            line.games += 1
    if "opponents_points" in tie_breaks:
        _add_opponents_points(lines, unique)
    if knockout is not None:
        seed_rank = {entrant.player_id: entrant.seed_rank for entrant in entrants}
        for number, tables in enumerate(knockout, start=1):
            for table in tables:
                for place, player in enumerate(table_ranking(table, unique, number, points, seed_rank), 1):
                    if player in lines:
                        lines[player].reached, lines[player].last_place = number, place
    ordered = sorted(lines.values(), key=lambda line: line.sort_key(tie_breaks))
    for index, line in enumerate(ordered):
        line.rank = index + 1
    return ordered


def _add_opponents_points(lines: Mapping[str, Standing], results: Iterable[GameResult]) -> None:
    """Buchholz: every line gains each opponent's final points once per game they shared."""
    for result in results:
        people = [lines[player] for player in result.seats if player != BOT and player in lines]
        for line in people:
            line.opponents_points += sum((other.points for other in people if other is not line), Fraction(0))


def table_ranking(table: SeatedTable, results: Iterable[GameResult], round_no: int,
                  points: Mapping[ResultKey, Sequence[Fraction]], seed_rank: Mapping[str, int]) -> list[str]:
    """The people of one table of a round, best first: by the points of the table's games of the
    round, then their game points, then games won, then the seeding order (then the id, should
    a player have no seeding): the knockout's cut and its final places."""
    earned: dict[str, Fraction] = {p: Fraction(0) for p in table.players}
    totals: dict[str, int] = dict.fromkeys(earned, 0)
    wins: dict[str, int] = dict.fromkeys(earned, 0)
    for result in results:
        if result.round != round_no or result.table != table.index:
            continue
        table_points = points[(result.round, result.table, result.game)]
        for seat, player in enumerate(result.seats):
            if player in earned:
                earned[player] += table_points[seat]
                totals[player] += result.scores[seat]
                wins[player] += won(result.scores, seat)
    unseeded = len(seed_rank)
    return sorted(earned, key=lambda p: (-earned[p], -totals[p], -wins[p], seed_rank.get(p, unseeded), p))


def advancing(tables: Sequence[SeatedTable], results: Iterable[GameResult], round_no: int,
              keep: int, seed_rank: Mapping[str, int], duplicate: bool = False) -> list[str]:
    """Knockout: the best ``keep`` people of each table of the round (:func:`table_ranking`);
    returned best-placed first, table by table."""
    mine = [result for result in results if result.round == round_no]
    points = game_points_of(mine, duplicate)
    chosen = [(place, table.index, player) for table in tables
              for place, player in enumerate(table_ranking(table, mine, round_no, points, seed_rank)[:keep])]
    return [player for _place, _table, player in sorted(chosen)]
