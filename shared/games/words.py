"""How a game reads to people: the words the terminal client (and any text client) uses.

Every game's package has a ``words`` module whose ``WORDS`` is a :class:`Words`:
card order and card text, one template per event type, one line of help per
action, names of seats that are no person, and the game's own parts of a view.
The text clients in ``shared/sdk`` hold the generic machinery and ask these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol


class SeatNames(Protocol):
    """The seats of a table as the viewer reads them ("you", "Anna", a seat no person holds)."""

    def __call__(self, seat: Any) -> str:
        """The seat's name ("-" for no seat)."""

    def possessive(self, seat: Any) -> str:
        """"your" or "Anna's"."""


class Words:
    """A game's words; the defaults suit a game without a hand order or special seats.

    Templates (``phrases``) name an event's fields in braces, with a format spec for what is no
    plain value: ``{winner:seat}``, ``{owner:whose}``, ``{victims:seats}``, ``{card:card}`` (a
    null card reads "no card"), ``{cards:cards}`` (a sorted hand, or ``[seat, card]`` plays in
    order); ``{who}``/``{whose}`` name the event's ``seat``. Verbs are written "take(s)": plain
    when the first seat the template names is "you", else with -s. ``round_over`` (with
    ``round``, ``scores``, the per-seat gains under :attr:`round_gains` and an optional ``end``)
    and ``game_over`` (``winners``, ``scores``) read the same in every game and need no template.
    A game overrides what differs; :meth:`sorted_cards` and :meth:`cards_text` follow from
    :meth:`card_key` and :meth:`card_text`.
    """

    #: Event type -> its template, for the game's own events (the table's events have theirs).
    phrases: ClassVar[Mapping[str, str]] = {}
    #: Action type -> what it means in the rules, one line.
    action_help: ClassVar[Mapping[str, str]] = {}
    #: View key of a per-seat list -> its column title, in column order; the totals
    #: (``scores``) are always the last column.
    seat_columns: ClassVar[Mapping[str, str]] = {}
    #: The field of a ``round_over`` event that lists what each seat gained in the round.
    round_gains: ClassVar[str] = "points"

    def card_key(self, card: str) -> tuple[int, ...]:
        """Where a card goes in a sorted hand; equal keys (the default) keep the order given."""
        return ()

    def card_text(self, card: str) -> str:
        """A card as players read it (the notation of the rules by default)."""
        return card

    def seat_name(self, seat: int) -> str | None:
        """A name for a seat that no person holds (a card monster); None: just "seat N"."""
        return None

    def action_card(self, action: Mapping[str, Any]) -> str | None:
        """The card an action is about (its ``card``), so that choices read like the sorted hand."""
        card = action.get("card")
        return card if isinstance(card, str) else None

    def action_text(self, action: Mapping[str, Any]) -> str:
        """The action in a few words for a numbered choice: its type, its card or cards, then the
        values of its other fields ("play R5", "call 2")."""
        parts = [str(action["type"])]
        if "card" in action:
            parts.append(self.card_text(action["card"]))
        if "cards" in action:
            parts.append(self.cards_text(action["cards"]))
        parts += [str(value) for key, value in action.items()
                  if key not in ("type", "card", "cards") and value is not None]
        return " ".join(parts)

    def help_for(self, action: Mapping[str, Any]) -> str:
        """What an action means (its type's line, unless the game says more)."""
        return self.action_help.get(str(action.get("type")), "")

    def header_facts(self, view: Mapping[str, Any]) -> list[str]:
        """Facts of the round for the header line after round and phase (a trump suit): none."""
        return []

    def view_lines(self, view: Mapping[str, Any], seats: SeatNames) -> list[str]:
        """The game's own parts of a view as text lines (its trick, trays, ...): none by default."""
        return []

    def sorted_cards(self, cards: Sequence[Any]) -> list[Any]:
        """Cards in the game's hand order."""
        return sorted(cards, key=lambda card: self.card_key(str(card)))

    def cards_text(self, cards: Sequence[Any]) -> str:
        """Cards in the game's hand order as players read them, separated by spaces."""
        return " ".join(self.card_text(str(card)) for card in self.sorted_cards(cards))


def table_rows(rows: Sequence[Sequence[str]], indent: str = "     ") -> list[str]:
    """Rows as aligned columns (every column as wide as its widest cell)."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(max(map(len, rows)))]
    return [indent + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
            for row in rows]


def trick_lines(words: Words, trick: Sequence[Sequence[Any]], seats: SeatNames,
                marks: Mapping[int, str] | None = None) -> list[str]:
    """The ``[seat, card]`` plays of a trick as a table under "trick:" (none for an empty trick),
    a seat's mark (a claim) after its card."""
    marks = marks or {}
    rows = [[seats(seat), words.card_text(card), marks.get(seat, "")] for seat, card in trick]
    return ["   trick:", *table_rows(rows)] if rows else []

