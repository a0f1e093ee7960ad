"""How many tables of which sizes a round needs for the players present.

The organizer names a preferred size; every table must have a size the game
allows (the catalogue's seat range). Among the splits of the players into
allowed sizes the one closest to the preferred size wins: the least sum of
squared differences from it, then the most tables of exactly that size. Only
when no split of the players exists (too few, or a gap in the range: five
players for a game of 3-4 seats) do bots fill seats: the fewest bots that make a
split possible, one per table from the smallest tables on.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Split:
    """Table sizes, largest first, and how many of their seats bots fill."""

    sizes: tuple[int, ...]
    bots: int

    @property
    def seats(self) -> int:
        """Seats of all tables together (players + bots)."""
        return sum(self.sizes)

    def bots_per_table(self) -> list[int]:
        """Bots at each table: one each from the last (smallest) table backwards, round after round."""
        counts = [0] * len(self.sizes)
        for index in range(self.bots):
            counts[len(self.sizes) - 1 - index % len(self.sizes)] += 1
        return counts


def check_sizes(min_size: int, max_size: int, preferred: int) -> None:
    """ValueError unless 2 <= min_size <= preferred <= max_size."""
    if not 2 <= min_size <= preferred <= max_size:
        raise ValueError(f"table size {preferred} is not within {min_size}..{max_size}")


def balanced(seats: int, tables: int) -> tuple[int, ...]:
    """``seats`` split into ``tables`` sizes that differ by at most one, largest first."""
    base, extra = divmod(seats, tables)
    return tuple([base + 1] * extra + [base] * (tables - extra))


def _closeness(sizes: tuple[int, ...], preferred: int) -> tuple[int, int]:
    return sum((size - preferred) ** 2 for size in sizes), -sizes.count(preferred)


def best_sizes(seats: int, min_size: int, max_size: int, preferred: int) -> tuple[int, ...] | None:
    """The split of exactly ``seats`` closest to ``preferred`` (None: there is none). For a fixed
    number of tables the sum of squares is least with sizes as equal as possible, so only each
    table count's balanced split is a candidate."""
    if seats <= 0:
        return () if seats == 0 else None
    candidates = [balanced(seats, tables)
                  for tables in range(-(-seats // max_size), seats // min_size + 1)]
    fitting = [sizes for sizes in candidates if min_size <= sizes[-1] and sizes[0] <= max_size]
    return min(fitting, key=lambda sizes: _closeness(sizes, preferred), default=None)


def split_tables(players: int, min_size: int, max_size: int, preferred: int) -> Split:
    """The tables for ``players`` people: no bot if any split exists, else the fewest bots."""
    check_sizes(min_size, max_size, preferred)
    if players < 0:
        raise ValueError(f"players must be >= 0, got {players}")
    bots = 0
    # Ends within min_size steps: any min_size consecutive seat counts hold a multiple of min_size.
    while (sizes := best_sizes(players + bots, min_size, max_size, preferred)) is None:
        bots += 1
    return Split(sizes, bots)
