"""Properties of the tournament core: splits, seating, rotation, scores, knockout."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.tournament.core.rounds import (
    FirstSeating,
    Format,
    Kind,
    Player,
    current_standings,
    entrants,
    finished,
    plan_round,
)
from services.tournament.core.seating import (
    BOT,
    SeatedTable,
    ideal_tables,
    meetings_of,
    seat_table,
    seating_cost,
    standings_groups,
)
from services.tournament.core.split import Split, split_tables
from services.tournament.core.standings import (
    GameResult,
    advancing,
    duplicate_points,
    placement_points,
    seat_scores,
    standings,
)

#: Seat ranges of the four games (min, max).
RANGES = [(3, 4), (3, 6), (2, 4), (3, 6)]


@st.composite
def table_rules(draw: st.DrawFn) -> tuple[int, int, int]:
    low, high = draw(st.sampled_from(RANGES))
    return low, high, draw(st.integers(low, high))


def all_splits(seats: int, low: int, high: int) -> list[tuple[int, ...]]:
    """Every multiset of sizes in low..high summing to seats (brute force)."""
    found = []
    for tables in range(1, seats // low + 1):
        for sizes in itertools.combinations_with_replacement(range(high, low - 1, -1), tables):
            if sum(sizes) == seats:
                found.append(sizes)
    return found


@given(table_rules(), st.integers(0, 40))
def test_split_uses_allowed_sizes_and_bots_only_when_no_split_works(rules: tuple[int, int, int],
                                                                     players: int) -> None:
    low, high, preferred = rules
    split = split_tables(players, low, high, preferred)
    assert all(low <= size <= high for size in split.sizes)
    assert split.seats == players + split.bots
    if players == 0:
        assert split.sizes == ()
        return
    for fewer in range(split.bots):
        assert not all_splits(players + fewer, low, high)
    options = all_splits(players + split.bots, low, high)
    closeness = [(sum((s - preferred) ** 2 for s in sizes), -sizes.count(preferred)) for sizes in options]
    assert (sum((s - preferred) ** 2 for s in split.sizes), -split.sizes.count(preferred)) == min(closeness)
    assert all(count <= high for count in split.bots_per_table())
    assert all(bots < size for bots, size in zip(split.bots_per_table(), split.sizes, strict=True))


def test_split_examples() -> None:
    assert split_tables(10, 3, 4, 4).sizes == (4, 3, 3)
    assert split_tables(5, 3, 4, 4) .sizes == (3, 3) and split_tables(5, 3, 4, 4).bots == 1
    assert split_tables(200, 3, 6, 4).sizes == (4,) * 50
    assert split_tables(2, 3, 4, 4).bots == 1


def brute_force_min_repeats(players: list[str], sizes: list[int], met: Counter[tuple[str, str]]) -> int:
    """The fewest repeat meetings over every ordering of the players cut into the sizes."""
    def total(order: tuple[str, ...]) -> int:
        cuts = list(itertools.accumulate(sizes, initial=0))
        groups = [order[a:b] for a, b in itertools.pairwise(cuts)]
        return sum(met[tuple(sorted(p))] for g in groups for p in itertools.combinations(g, 2))

    return min(total(order) for order in itertools.permutations(players))


def history_tables(players: list[str], rounds: int, size: int, rng: random.Random) -> list[list[str]]:
    tables = []
    for _ in range(rounds):
        shuffled = players[:]
        rng.shuffle(shuffled)
        tables += [shuffled[i:i + size] for i in range(0, len(shuffled) - size + 1, size)]
    return tables


def later_round(count: int, earlier: int, rules: tuple[int, int, int], rng: random.Random) -> tuple[
        list[str], Counter[tuple[str, str]], Split, list[list[str]]]:
    """A field of ``count`` ranked players after ``earlier`` random rounds, seated by standings."""
    players = [f"p{i:02}" for i in range(count)]
    met = meetings_of(history_tables(players, earlier, rules[0], rng))
    split = split_tables(count, *rules)
    return players, met, split, standings_groups(players, split, met)


@settings(max_examples=40, deadline=None)
@given(st.integers(6, 7), st.integers(1, 3), st.randoms(use_true_random=False))
def test_repeat_meetings_are_minimal_on_small_fields(count: int, earlier: int, rng: random.Random) -> None:
    players, met, split, groups = later_round(count, earlier, (3, 4, 3), rng)
    got = seating_cost(groups, met, ideal_tables(players, split))[0]
    assert got == brute_force_min_repeats(players, list(split.sizes), met)


@settings(max_examples=15, deadline=None)
@given(st.integers(10, 28), st.integers(1, 4), st.randoms(use_true_random=False))
def test_large_fields_are_swap_optimal(count: int, earlier: int, rng: random.Random) -> None:
    players, met, split, groups = later_round(count, earlier, (3, 6, 4), rng)
    ideal = ideal_tables(players, split)
    cost = seating_cost(groups, met, ideal)
    assert sorted(p for g in groups for p in g) == sorted(players)
    for a, b in itertools.combinations(range(len(groups)), 2):
        for i, j in itertools.product(range(len(groups[a])), range(len(groups[b]))):
            trial = [list(g) for g in groups]
            trial[a][i], trial[b][j] = trial[b][j], trial[a][i]
            assert seating_cost(trial, met, ideal) >= cost


@given(st.integers(2, 6))
def test_a_group_meeting_n_times_holds_every_seat_once(size: int) -> None:
    group = [f"p{i}" for i in range(size)]
    counts: dict[str, Counter[int]] = {}
    for _ in range(size):
        seats = seat_table(group, 0, counts)
        for seat, player in enumerate(seats):
            counts.setdefault(player, Counter())[seat] += 1
    assert all(sorted(c) == list(range(size)) and set(c.values()) == {1} for c in counts.values())


@st.composite
def series_case(draw: st.DrawFn) -> tuple[Format, list[Player], dict[str, tuple[int, int | None]]]:
    low, high, preferred = draw(table_rules())
    count = draw(st.integers(1, 30))
    rounds = draw(st.integers(1, 4))
    fmt = Format(Kind.SERIES, rounds, draw(st.integers(1, 2)), low, high, preferred,
                 seed=draw(st.integers(0, 99)))
    players = []
    for order in range(count):
        first = draw(st.integers(1, rounds))
        last = draw(st.one_of(st.none(), st.integers(first, rounds)))
        players.append(Player(f"{order:032x}", draw(st.integers(1000, 2000)), order, first, last))
    return fmt, players, {p.player_id: (p.first_round, p.last_round) for p in players}


def play(tables: list[SeatedTable], round_no: int, games: int, rng: random.Random) -> list[GameResult]:
    return [GameResult(round_no, table.index, game, table.seats,
                       tuple(rng.randint(0, 5) for _ in table.seats))
            for table in tables for game in range(1, games + 1)]


@settings(max_examples=60, deadline=None)
@given(series_case(), st.randoms(use_true_random=False))
def test_every_present_player_is_seated_once_per_round(case: tuple, rng: random.Random) -> None:
    fmt, players, presence = case
    rounds: list[list[SeatedTable]] = []
    results: list[GameResult] = []
    while not finished(fmt, rounds):
        tables = plan_round(fmt, players, rounds, results)
        number = len(rounds) + 1
        seated = [p for t in tables for p in t.players]
        expected = {p for p, (first, last) in presence.items()
                    if first <= number and (last is None or number <= last)}
        assert len(seated) == len(set(seated)) and set(seated) == expected
        split = split_tables(len(expected), fmt.min_size, fmt.max_size, fmt.table_size)
        assert sorted(len(t.seats) for t in tables) == sorted(split.sizes)
        assert sum(t.seats.count(BOT) for t in tables) == split.bots
        rounds.append(tables)
        results += play(tables, number, fmt.games_per_round, rng)
    final = standings(entrants(players), results, fmt.games_per_round)
    assert [line.rank for line in final] == list(range(1, len(players) + 1))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 60), st.sampled_from(RANGES), st.integers(1, 2), st.randoms(use_true_random=False))
def test_knockout_keeps_the_best_per_table_until_one_final_table(count: int, rng_range: tuple[int, int],
                                                                  keep: int, rng: random.Random) -> None:
    low, high = rng_range
    keep = min(keep, low - 1)
    fmt = Format(Kind.KNOCKOUT, 0, 1, low, high, high, seed=1, keep=keep)
    players = [Player(f"{i:032x}", 1500, i) for i in range(count)]
    rounds: list[list[SeatedTable]] = []
    results: list[GameResult] = []
    while not finished(fmt, rounds):
        tables = plan_round(fmt, players, rounds, results)
        if rounds:
            expected = sum(min(keep, len(t.players)) for t in rounds[-1])
            assert sum(len(t.players) for t in tables) == expected
        rounds.append(tables)
        results += play(tables, len(rounds), 1, rng)
        assert len(rounds) < 20
    assert len(rounds[-1]) == 1
    final = current_standings(fmt, players, rounds, results)
    assert {line.player_id for line in final[:len(rounds[-1][0].players)]} == set(rounds[-1][0].players)
    seed_rank = {entrant.player_id: entrant.seed_rank for entrant in entrants(players)}
    assert final[0].player_id == advancing(rounds[-1], results, len(rounds), 1, seed_rank)[0]


@given(st.lists(st.integers(0, 5), min_size=2, max_size=6))
def test_placement_points_are_scaled_by_table_size(scores: list[int]) -> None:
    points = placement_points(scores)
    assert sum(points) == Fraction(len(scores), 2)
    assert all(0 <= p <= 1 for p in points)
    best = max(scores)
    sole_best = [s == best and scores.count(best) == 1 for s in scores]
    assert [p == 1 for p in points] == sole_best


def test_duplicate_points_compare_the_same_seat_at_other_tables() -> None:
    mine = GameResult(1, 0, 1, ("a", "b", "c"), (10, 0, 5))
    others = [GameResult(1, 1, 1, ("d", "e", "f"), (5, 0, 9)),
              GameResult(1, 2, 1, ("g", "h", "i"), (10, 3, 1))]
    assert duplicate_points(mine, others) == [Fraction(3, 4), Fraction(1, 4), Fraction(1, 2)]
    assert duplicate_points(mine, []) == placement_points(mine.scores)


@given(st.randoms(use_true_random=False))
def test_standings_ignore_order_and_repeats_of_results(rng: random.Random) -> None:
    players = [Player(f"p{i}", 1500, i) for i in range(8)]
    tables = [SeatedTable(0, ("p0", "p1", "p2", "p3")), SeatedTable(1, ("p4", "p5", "p6", "p7"))]
    results = play(tables, 1, 3, rng)
    shuffled = results + results[:2]
    rng.shuffle(shuffled)
    first = standings(entrants(players), results, 3)
    again = standings(entrants(players), shuffled, 3)
    assert [(s.player_id, s.points, s.game_points) for s in first] == [
        (s.player_id, s.points, s.game_points) for s in again]


def test_late_entry_is_credited_half_a_point_per_missed_game() -> None:
    late = Player("late", 1500, 1, first_round=3)
    lines = standings(entrants([Player("early", 1500, 0), late]), [], 2)
    assert {s.player_id: s.points for s in lines} == {"early": 0, "late": Fraction(2)}


def test_round_one_by_rating_deals_the_field_in_snake_order() -> None:
    fmt = Format(Kind.SERIES, 1, 1, 3, 4, 4, seed=0, first_seating=FirstSeating.RATING)
    players = [Player(f"p{i}", rating=100 - i, order=i) for i in range(8)]  # p0 rated best
    tables = plan_round(fmt, players, [], [])
    assert [sorted(t.players) for t in tables] == [["p0", "p3", "p4", "p7"], ["p1", "p2", "p5", "p6"]]


def test_a_knockout_is_won_by_the_winner_of_the_final_table() -> None:
    """Points carried from round 1 do not outrank the final: e had more points and game points
    over both rounds, but f won the final table (totals 9, 13, 9, 17), so f is first."""
    fmt = Format(Kind.KNOCKOUT, 0, 1, 3, 4, 4, seed=0, keep=2)
    players = [Player(name, 1500, order) for order, name in enumerate("abcdefgh")]
    rounds = [[SeatedTable(0, ("a", "b", "c", "d")), SeatedTable(1, ("e", "f", "g", "h"))],
              [SeatedTable(0, ("a", "e", "b", "f"))]]
    results = [GameResult(1, 0, 1, ("a", "b", "c", "d"), (10, 6, 5, 0)),
               GameResult(1, 1, 1, ("e", "f", "g", "h"), (11, 6, 5, 0)),
               GameResult(2, 0, 1, ("a", "e", "b", "f"), (9, 13, 9, 17))]
    lines = current_standings(fmt, players, rounds, results)
    assert [line.player_id for line in lines[:4]] == ["f", "e", "a", "b"]
    assert [line.player_id for line in lines[4:]] == ["c", "g", "d", "h"]  # by their last table's place


def test_a_knockout_honours_the_table_size_while_more_than_one_table_is_full() -> None:
    """Six players at table size 3 play two tables of 3, then the final of the 2 + 2 kept."""
    fmt = Format(Kind.KNOCKOUT, 0, 1, 3, 6, 3, seed=0, keep=2)
    players = [Player(f"p{i}", 1500, i) for i in range(6)]
    first = plan_round(fmt, players, [], [])
    assert sorted(len(table.seats) for table in first) == [3, 3]
    results = play(first, 1, 1, random.Random(1))
    final = plan_round(fmt, players, [first], results)
    assert [len(table.seats) for table in final] == [4]
    assert finished(fmt, [first, final])


def test_the_knockout_cut_breaks_ties_as_the_standings_do() -> None:
    """P and Q tie on the round's points (4/3) and game points (17); P won a game, Q none, so
    P goes on although Q is seeded first; with wins tied too the seeding decides. The same
    whatever the order of the results."""
    seeds = {"q": 0, "p": 1, "r": 2, "s": 3}
    table = SeatedTable(0, ("p", "q", "r", "s"))
    results = [GameResult(1, 0, 1, table.seats, (10, 9, 0, -5)),
               GameResult(1, 0, 2, table.seats, (7, 8, 15, 0))]
    assert advancing([table], results, 1, 1, seeds) == ["p"]
    assert advancing([table], results[::-1], 1, 2, seeds) == ["p", "q"]
    level = [GameResult(1, 0, 1, table.seats, (10, 10, 0, 0)), GameResult(1, 0, 2, table.seats, (0, 0, 5, 5))]
    assert advancing([table], level, 1, 1, seeds) == ["q"]  # a shared first place is a win for each


def test_a_position_no_seat_holds_never_counts_for_a_place() -> None:
    """A game over at 3 seats may report 4 totals (a card monster the game plays itself, last):
    the result keeps the seats' 3, and the monster's total changes nobody's place."""
    assert seat_scores([5, 3, 1, 9], 3) == (5, 3, 1)
    assert placement_points(seat_scores([5, 3, 1, 9], 3)) == [1, Fraction(1, 2), 0]
    with pytest.raises(ValueError):
        seat_scores([5, 3], 3)
