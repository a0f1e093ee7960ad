"""What organizers ask for, in the pure core: forbidden pairs and the order of tie-breaks."""

from __future__ import annotations

from fractions import Fraction

import pytest

from services.tournament.core.rounds import FirstSeating, Format, Kind, Player, current_standings, plan_round
from services.tournament.core.seating import forced_pairs, meetings_of, pair
from services.tournament.core.standings import (
    DEFAULT_TIE_BREAKS,
    Entrant,
    GameResult,
    check_tie_breaks,
    standings,
)

IDS = [f"{n:032x}" for n in range(1, 13)]


def fmt(forbidden: set[tuple[str, str]], seed: int = 7, first: FirstSeating = FirstSeating.RANDOM,
        kind: Kind = Kind.SERIES) -> Format:
    return Format(kind, 3, 1, 3, 4, 4, seed, first, forbidden=frozenset(pair(a, b) for a, b in forbidden))


def together(tables: list, a: str, b: str) -> bool:
    return any(a in t.players and b in t.players for t in tables)


@pytest.mark.parametrize("first", [FirstSeating.RANDOM, FirstSeating.RATING])
@pytest.mark.parametrize("count", [8, 12])
def test_round_one_keeps_forbidden_pairs_apart(first: FirstSeating, count: int) -> None:
    players = [Player(pid, rating=float(count - i), order=i) for i, pid in enumerate(IDS[:count])]
    for seed in range(20):
        free = plan_round(fmt(set(), seed, first), players, [], [])
        # Forbid two pairs the unconstrained seating puts together at its first table.
        first_table = free[0].players
        banned = {pair(first_table[0], first_table[1]), pair(first_table[2], first_table[3])}
        assert forced_pairs([t.players for t in free], banned) == sorted(banned)
        seated = plan_round(fmt(banned, seed, first), players, [], [])
        assert forced_pairs([t.players for t in seated], banned) == []
        assert sorted(p for t in seated for p in t.players) == sorted(IDS[:count])


def test_later_rounds_keep_forbidden_pairs_apart_before_avoiding_repeats() -> None:
    players = [Player(pid, rating=0.0, order=i) for i, pid in enumerate(IDS[:8])]
    round1 = plan_round(fmt(set()), players, [], [])
    results = [GameResult(1, t.index, 1, t.seats, tuple(range(len(t.seats)))) for t in round1]
    free = plan_round(fmt(set()), players, [[*round1]], results)
    banned = {pair(*free[0].players[:2]), pair(*free[1].players[:2])}
    seated = plan_round(fmt(banned), players, [[*round1]], results)
    assert not any(together(seated, a, b) for a, b in banned)


def test_a_pair_no_seating_can_separate_is_reported() -> None:
    # Four players fit one table only: the forbidden pair must sit together, and says so.
    players = [Player(pid, rating=0.0, order=i) for i, pid in enumerate(IDS[:4])]
    banned = {pair(IDS[0], IDS[1])}
    seated = plan_round(fmt(banned), players, [], [])
    assert len(seated) == 1 and forced_pairs([t.players for t in seated], banned) == sorted(banned)


def test_without_forbidden_pairs_the_seating_is_unchanged() -> None:
    players = [Player(pid, rating=0.0, order=i) for i, pid in enumerate(IDS[:12])]
    plain = Format(Kind.SERIES, 3, 1, 3, 4, 4, 7, FirstSeating.RANDOM)
    assert plan_round(plain, players, [], []) == plan_round(fmt(set()), players, [], [])
    assert meetings_of([]) == {}


A, B, C = IDS[:3]
#: a and b share first place twice and win once each: equal points (5/2). a has fewer game points
#: (181 < 185) but more wins (3 > 2) and the best single game (61 > 60).
TIED = [GameResult(1, 0, 1, (A, B, C), (50, 50, 0)), GameResult(1, 0, 2, (A, B, C), (30, 30, 0)),
        GameResult(1, 0, 3, (A, B, C), (40, 60, 100)), GameResult(1, 0, 4, (A, B, C), (61, 45, 10))]


@pytest.mark.parametrize(("tie_breaks", "first"), [
    (DEFAULT_TIE_BREAKS, B), (("wins",), A), (("best_game", "game_points"), A), (("game_points", "wins"), B)])
def test_the_tie_break_order_decides_equal_points(tie_breaks: tuple[str, ...], first: str) -> None:
    lines = standings([Entrant(A, 0), Entrant(B, 1), Entrant(C, 2)], TIED, 4, tie_breaks=tie_breaks)
    assert lines[0].points == lines[1].points == Fraction(5, 2)
    assert lines[0].player_id == first
    assert (lines[0].game_points, lines[0].wins, lines[0].best_game) == \
        ((185, 2, 60) if first == B else (181, 3, 61))


def test_opponents_points_is_buchholz() -> None:
    a, b, c, d = IDS[:4]
    entrants = [Entrant(p, i) for i, p in enumerate((a, b, c, d))]
    # a beats c, b beats d; d beats a, c beats b; d beats c; a and b share: points a 3/2, b 3/2, c 1, d 2.
    results = [GameResult(1, 0, 1, (a, c), (10, 0)), GameResult(1, 1, 1, (b, d), (10, 0)),
               GameResult(2, 0, 1, (a, d), (0, 10)), GameResult(2, 1, 1, (b, c), (0, 10)),
               GameResult(3, 0, 1, (c, d), (0, 10)), GameResult(3, 1, 1, (a, b), (5, 5))]
    lines = {line.player_id: line for line in standings(entrants, results, 1,
                                                         tie_breaks=("opponents_points",))}
    assert lines[a].points == lines[b].points
    # a met c, d and b (1 + 2 + 3/2); b met d, c and a (2 + 1 + 3/2); c met a, b and d.
    assert lines[a].opponents_points == lines[b].opponents_points == lines[c].points + lines[d].points + \
        lines[b].points
    assert lines[c].opponents_points == lines[a].points + lines[b].points + lines[d].points


def test_tie_breaks_are_checked() -> None:
    assert check_tie_breaks([]) == DEFAULT_TIE_BREAKS
    assert check_tie_breaks(["wins", "best_game"]) == ("wins", "best_game")
    with pytest.raises(ValueError, match="unknown tie-break 'luck'"):
        check_tie_breaks(["luck"])
    with pytest.raises(ValueError, match="twice"):
        check_tie_breaks(["wins", "wins"])


def test_the_format_carries_the_tie_breaks_into_the_standings() -> None:
    players = [Player(pid, rating=0.0, order=i) for i, pid in enumerate(IDS[:3])]
    default = Format(Kind.SERIES, 1, 4, 3, 4, 3, 1)
    wins_first = Format(Kind.SERIES, 1, 4, 3, 4, 3, 1, tie_breaks=("wins", "game_points"))
    assert current_standings(default, players, [], TIED)[0].player_id == B
    assert current_standings(wins_first, players, [], TIED)[0].player_id == A
