"""Who sits at which table and in which seat, round after round.

* Round 1: at random (a seeded shuffle), or by rating in snake order (best to
  table 1, 2, ... n, then n ... 1 again), so the tables are of equal strength.
* Later rounds: by the standings (the best players together) while meeting as
  few earlier opponents as possible. The first aim is the fewest repeat
  meetings (each pair at one table counts as often as they met before), the
  second the least displacement from the table their rank alone would give.
  Fields of up to :data:`EXACT_PLAYERS` players are searched exhaustively;
  larger ones start from the rank order and swap players between tables while
  a swap improves the aims (a local optimum: no single swap helps).
* Seats: within a table the players take the seats that they have held least
  often so far (the least sum of earlier counts; ties by rank), so seats and
  with seat 0 the first deal rotate fairly: a group that meets n times at an
  n-seat table holds every seat once.

Bots take the last seats of a table's seat list before rotation, so they rotate too.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from services.tournament.core.split import Split

#: A seat a bot fills.
BOT = ""
#: Fields up to this size get the exhaustive search for the fewest repeat meetings.
EXACT_PLAYERS = 9
#: Swap passes of the local search at most (each pass tries every pair of tables).
MAX_PASSES = 20
#: What seating a forbidden pair together costs, in repeat meetings: more than any number of
#: repeats, so a seating keeps every pair apart that it can.
FORBIDDEN_WEIGHT = 1_000_000

#: How often each pair of players sat at one table before: (a, b) with a < b.
Meetings = Mapping[tuple[str, str], int]
#: How often each player held each seat before: player -> seat -> count.
SeatCounts = Mapping[str, Mapping[int, int]]


@dataclass(frozen=True)
class SeatedTable:
    """One table of a round: a player id per seat, :data:`BOT` where a bot plays."""

    index: int
    seats: tuple[str, ...]

    @property
    def players(self) -> list[str]:
        """The people at the table, in seat order."""
        return [player for player in self.seats if player != BOT]


def pair(a: str, b: str) -> tuple[str, str]:
    """The key of a pair in :data:`Meetings`."""
    return (a, b) if a < b else (b, a)


def meetings_of(tables: Iterable[Sequence[str]]) -> Counter[tuple[str, str]]:
    """Pair meetings of the given tables (bots do not count)."""
    met: Counter[tuple[str, str]] = Counter()
    for seats in tables:
        people = [player for player in seats if player != BOT]
        met.update(pair(a, b) for a, b in itertools.combinations(people, 2))
    return met


def seat_counts_of(tables: Iterable[Sequence[str]]) -> dict[str, Counter[int]]:
    """How often each player held each seat in the given tables."""
    counts: dict[str, Counter[int]] = {}
    for seats in tables:
        for seat, player in enumerate(seats):
            if player != BOT:
                counts.setdefault(player, Counter())[seat] += 1
    return counts


def repeats(groups: Iterable[Sequence[str]], met: Meetings) -> int:
    """Repeat meetings of a grouping: the earlier meetings of every pair it seats together."""
    return sum(met.get(pair(a, b), 0) for group in groups for a, b in itertools.combinations(group, 2))


def with_forbidden(met: Meetings, forbidden: Collection[tuple[str, str]]) -> Meetings:
    """The meetings to avoid, each forbidden pair (a < b) weighing :data:`FORBIDDEN_WEIGHT`
    (``met`` itself when there are none: the usual case costs nothing)."""
    if not forbidden:
        return met
    weights = Counter(met)
    weights.update(dict.fromkeys(forbidden, FORBIDDEN_WEIGHT))
    return weights


def forced_pairs(groups: Iterable[Sequence[str]],
                 forbidden: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The forbidden pairs (a < b) that ``groups`` seat at one table, sorted."""
    together = meetings_of(groups)
    return sorted(p for p in forbidden if together.get(p))


def apart(groups: list[list[str]], forbidden: Collection[tuple[str, str]]) -> list[list[str]]:
    """``groups`` with forbidden pairs moved apart by the fewest moves from their tables
    (exhaustive up to :data:`EXACT_PLAYERS` players, else the swap search); unchanged when
    no pair sits together."""
    if not forbidden or not forced_pairs(groups, forbidden):
        return groups
    weights = with_forbidden({}, forbidden)
    where = {player: index for index, group in enumerate(groups) for player in group}
    people = [player for group in groups for player in group]
    if len(people) <= EXACT_PLAYERS:
        found = _exhaustive(people, [len(group) for group in groups], weights, where)
        return [sorted(group, key=people.index) for group in found]
    return _swap_search(groups, weights, where)


# -- round 1 -----------------------------------------------------------------------------


def random_groups(players: Sequence[str], split: Split, seed: int) -> list[list[str]]:
    """Players shuffled by ``seed`` and dealt into the tables in turn."""
    shuffled = sorted(players)
    random.Random(seed).shuffle(shuffled)
    return _deal_in_order(shuffled, split)


def snake_groups(ranked: Sequence[str], split: Split) -> list[list[str]]:
    """Players, best first, dealt in snake order (1..n, n..1, ...) over tables with room."""
    room = [size - bots for size, bots in zip(split.sizes, split.bots_per_table(), strict=True)]
    groups: list[list[str]] = [[] for _ in room]
    order = list(range(len(room)))
    queue = list(ranked)
    while queue:
        for index in order:
            if queue and len(groups[index]) < room[index]:
                groups[index].append(queue.pop(0))
        order.reverse()
    return groups


def _deal_in_order(ordered: Sequence[str], split: Split) -> list[list[str]]:
    """Consecutive runs of ``ordered`` fill the tables in turn (the rank order's ideal tables)."""
    groups: list[list[str]] = []
    start = 0
    for size, bots in zip(split.sizes, split.bots_per_table(), strict=True):
        groups.append(list(ordered[start:start + size - bots]))
        start += size - bots
    return groups


# -- later rounds -------------------------------------------------------------------------


def _displacement(groups: Sequence[Sequence[str]], ideal: Mapping[str, int]) -> int:
    return sum(abs(index - ideal[player]) for index, group in enumerate(groups) for player in group)


def seating_cost(groups: Sequence[Sequence[str]], met: Meetings,
                 ideal: Mapping[str, int]) -> tuple[int, int]:
    """What later rounds minimise: (repeat meetings, displacement from the ideal tables)."""
    return repeats(groups, met), _displacement(groups, ideal)


def standings_groups(ranked: Sequence[str], split: Split, met: Meetings) -> list[list[str]]:
    """Tables for a later round: the fewest repeat meetings, then closest to the rank order."""
    start = _deal_in_order(ranked, split)
    ideal = ideal_tables(ranked, split)
    if len(ranked) <= EXACT_PLAYERS:
        groups = _exhaustive(ranked, [len(group) for group in start], met, ideal)
    else:
        groups = _swap_search(start, met, ideal)
    rank = {player: index for index, player in enumerate(ranked)}
    return [sorted(group, key=rank.__getitem__) for group in groups]


def ideal_tables(ranked: Sequence[str], split: Split) -> dict[str, int]:
    """The table each player's rank alone would give (consecutive runs of the ranking)."""
    return {player: index for index, group in enumerate(_deal_in_order(ranked, split))
            for player in group}


def partitions(players: Sequence[str], sizes: Sequence[int]) -> Iterable[list[list[str]]]:
    """Every way to seat ``players`` at tables of ``sizes`` (order within a table ignored)."""
    if not sizes:
        yield []
        return
    first, rest = sizes[0], sizes[1:]
    for group in itertools.combinations(players, first):
        left = [player for player in players if player not in group]
        for others in partitions(left, rest):
            yield [list(group), *others]


def _exhaustive(ranked: Sequence[str], sizes: Sequence[int], met: Meetings,
                ideal: Mapping[str, int]) -> list[list[str]]:
    return min(partitions(ranked, sizes), key=lambda groups: seating_cost(groups, met, ideal))


def _swap_search(groups: list[list[str]], met: Meetings, ideal: Mapping[str, int]) -> list[list[str]]:
    """Swap two players of two tables while that lowers the cost; first improvement wins."""
    groups = [list(group) for group in groups]

    def gain(a: int, x: str, b: int, y: str) -> tuple[int, int]:
        """Cost change of moving x from table a to b and y from b to a."""
        meet = sum(met.get(pair(y, z), 0) - met.get(pair(x, z), 0) for z in groups[a] if z != x)
        meet += sum(met.get(pair(x, w), 0) - met.get(pair(y, w), 0) for w in groups[b] if w != y)
        moved = (abs(b - ideal[x]) + abs(a - ideal[y]) - abs(a - ideal[x]) - abs(b - ideal[y]))
        return meet, moved

    for _pass in range(MAX_PASSES):
        improved = False
        for a, b in itertools.combinations(range(len(groups)), 2):
            for i, j in itertools.product(range(len(groups[a])), range(len(groups[b]))):
                if gain(a, groups[a][i], b, groups[b][j]) < (0, 0):
                    groups[a][i], groups[b][j] = groups[b][j], groups[a][i]
                    improved = True
        if not improved:
            break
    return groups


# -- seats ---------------------------------------------------------------------------------


def seat_table(group: Sequence[str], bots: int, counts: SeatCounts) -> tuple[str, ...]:
    """Seat order of one table: each player where they sat least so far (ties: group order)."""
    people = list(group)
    size = len(people) + bots
    best: tuple[int, ...] | None = None
    best_cost = -1
    for seats in itertools.permutations(range(size), len(people)):
        cost = sum(counts.get(player, {}).get(seat, 0) for player, seat in zip(people, seats, strict=True))
        if best is None or cost < best_cost:
            best, best_cost = seats, cost
    order = [BOT] * size
    for player, seat in zip(people, best or (), strict=True):
        order[seat] = player
    return tuple(order)


def seat_round(groups: Sequence[Sequence[str]], split: Split, counts: SeatCounts) -> list[SeatedTable]:
    """Seated tables from the groups of a round (bots per :meth:`Split.bots_per_table`)."""
    return [SeatedTable(index, seat_table(group, bots, counts))
            for index, (group, bots) in enumerate(zip(groups, split.bots_per_table(), strict=True))]
