"""How a game reads to people: the words the terminal client (and any text client) uses.

Every game's package has a ``words`` module whose ``WORDS`` is a :class:`Words`:
card order and card text, one template per event type, one line of help per
action, names of seats that are no person, and the game's own parts of a view.
The text clients in ``shared/sdk`` hold the generic machinery and ask these.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

#: A seat number as the viewer reads it ("you", "Anna", "monster").
SeatName = Callable[[Any], str]


class Words:
    """A game's words; the defaults suit a game without a hand order or special seats.

    Templates name an event's fields in braces (``{card}``, ``{tricks}``) and its seats as
    ``{who}``/``{whose}``, ``{winner}``, ``{victim}`` ...; verbs are written "take(s)".
    """

    #: Event type -> its line, for the game's own events (the table's events have theirs).
    phrases: ClassVar[Mapping[str, str]] = {}
    #: Action type -> what it means in the rules, one line.
    action_help: ClassVar[Mapping[str, str]] = {}

    def card_key(self, card: str) -> tuple[int, int] | None:
        """Where a card goes in a sorted hand; None keeps the order the view gives."""
        return None

    def card_text(self, card: str) -> str:
        """A card as players read it (the notation of the rules by default)."""
        return card

    def seat_name(self, seat: int) -> str | None:
        """A name for a seat that no person holds (Willi's card monster); None otherwise."""
        return None

    def help_for(self, action: Mapping[str, Any]) -> str:
        """What an action means (its type's line, unless the game says more)."""
        return self.action_help.get(str(action.get("type")), "")

    def view_lines(self, view: Mapping[str, Any], seat_name: SeatName) -> list[str]:
        """The game's own parts of a view as text lines (trays, dogs, ...): none by default."""
        return []


def table_rows(rows: Sequence[Sequence[str]], indent: str = "     ") -> list[str]:
    """Rows as aligned columns (every column as wide as its widest cell)."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(max(map(len, rows)))]
    return [indent + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
            for row in rows]
