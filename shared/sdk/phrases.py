"""The words of the terminal client: cards, hands in each game's order, one line per move,
and a line of help for each action. The table's own events are written here; everything
about a game comes from its words (:func:`shared.games.registry.words_of`)."""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from shared.games.registry import words_of
from shared.games.words import Words


@dataclass(frozen=True)
class Seats:
    """Names of the seats of a table, as the viewer reads them ("you" for the own seat)."""

    names: Sequence[str]
    me: int | None
    #: The game's words, which name the seats no person holds (see :meth:`playing`).
    words: Words = field(default_factory=Words)

    def __call__(self, seat: Any) -> str:
        if not isinstance(seat, int):
            return "-"
        if seat == self.me:
            return "you"
        if seat < len(self.names) and self.names[seat]:
            return self.names[seat]
        return self.words.seat_name(seat) or f"seat {seat}"

    def possessive(self, seat: Any) -> str:
        """"your" or "Anna's"."""
        name = self(seat)
        return "your" if name == "you" else f"{name}'s"

    def playing(self, game: str) -> Seats:
        """These seats at a table of ``game``, whose words name the seats no person holds."""
        return replace(self, words=words_of(game))


def ordered_choices(game: str, legal: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The legal actions grouped by type (in the engine's order) and by card within a type,
    so that the numbered list reads like the sorted hand."""
    words = words_of(game)
    types = list(dict.fromkeys(action["type"] for action in legal))

    def order(action: dict[str, Any]) -> tuple[int, tuple[int, ...]]:
        card = words.action_card(action)
        return types.index(action["type"]), () if card is None else words.card_key(card)

    return sorted(legal, key=order)


# -- one line per event ------------------------------------------------------------------


class _EventFormatter(string.Formatter):
    """Fills an event template: a spec says how a field reads (``seat``, ``whose``, ``seats``,
    ``card``, ``cards``); ``who``/``whose`` name the event's ``seat``."""

    def __init__(self, seats: Seats) -> None:
        super().__init__()
        self.seats = seats

    def format_field(self, value: Any, format_spec: str) -> str:
        words = self.seats.words
        if format_spec == "seat":
            return self.seats(value)
        if format_spec == "whose":
            return self.seats.possessive(value)
        if format_spec == "seats":
            return ", ".join(self.seats(seat) for seat in value)
        if format_spec == "card":
            return "no card" if not value else words.card_text(str(value))
        if format_spec == "cards":  # a hand or tray (sorted), or the [seat, card] plays of a trick
            if all(isinstance(card, str) for card in value):
                return words.cards_text(value)
            return " ".join(words.card_text(play[1]) for play in value)
        return str(super().format_field(value, format_spec))

    def line(self, template: str, event: Mapping[str, Any]) -> str:
        """The template filled from the event, its verbs resolved for its first seat."""
        fields = {**event, "who": self.seats(event.get("seat")),
                  "whose": self.seats.possessive(event.get("seat"))}
        subject = next((f"{{{name}:{spec}}}" if spec else f"{{{name}}}"
                        for _, name, spec, _ in self.parse(template)
                        if name in ("who", "whose") or spec in ("seat", "whose")), None)
        is_you = subject is not None and self.format(subject, **fields) == "you"
        return _verbs(self.format(template, **fields), is_you)


def _verbs(line: str, is_you: bool) -> str:
    """Resolve "take(s)", "pass(es)": plain after "you", else the third person."""
    for plain, third in (("(es)", "es"), ("(s)", "s")):
        line = line.replace(plain, "" if is_you else third)
    return line


def _scores(event: Mapping[str, Any], seats: Seats) -> str:
    return " · ".join(f"{seats(s)} {total}" for s, total in enumerate(event.get("scores", [])))


def _game_over(e: Mapping[str, Any], seats: Seats) -> str:
    winners = ", ".join(seats(s) for s in e.get("winners", []))
    return f"GAME OVER · winners: {winners} · totals: {_scores(e, seats)}"


def _round_over(e: Mapping[str, Any], seats: Seats) -> str:
    gained = e.get(seats.words.round_gains) or []
    earned = ", ".join(f"{seats(s)} {g:+d}" for s, g in enumerate(gained))
    why = f" ({e['end'].replace('_', ' ')})" if e.get("end") else ""
    return f"round {e.get('round')} over{why} · {earned} · totals: {_scores(e, seats)}"


def _game_started(e: Mapping[str, Any], seats: Seats) -> str:
    def who(seat: dict[str, Any]) -> str:
        name = seats(seat["seat"])
        return f"{name} (bot)" if seat.get("bot") and "bot" not in name.lower() else name

    people = ", ".join(who(seat) for seat in e.get("seats", []))
    return f"game {e.get('game_no', 1)} starts · {people}"


Phrase = Callable[[Mapping[str, Any], Seats], str]


def _say(template: str) -> Phrase:
    """A phrase from a template in the notation of :class:`shared.games.words.Words`."""
    return lambda event, seats: _EventFormatter(seats).line(template, event)


#: The lines of the table's own events and of the events every game has alike.
PHRASES: dict[str, Phrase] = {
    "game_started": _game_started,
    "seat_bot": _say("the stand-in bot plays for {who} now"),
    "seat_reclaimed": _say("{who} took the seat back from the bot"),
    "timed_out": _say("{who} ran out of time: the default move follows"),
    "time_up": _say("time is up in round {round}"),
    "table_closed": _say("the table was closed ({reason})"),
    "round_over": _round_over,
    "game_over": _game_over,
}


def event_line(event: dict[str, Any], seats: Seats, game: str) -> str:
    """One compact line for an event ("Anna plays ♥9", "Bruno calls 2")."""
    seats = seats.playing(game)
    kind = str(event.get("type", "?"))
    template = seats.words.phrases.get(kind)
    phrase = PHRASES.get(kind) if template is None else _say(template)
    if phrase is None:
        rest = " ".join(f"{k}={v}" for k, v in event.items() if k not in ("type", "seat"))
        return f"{seats(event.get('seat'))}: {kind} {rest}".strip()
    try:
        return phrase(event, seats)
    except (KeyError, ValueError, TypeError, IndexError):  # a field missing: still one readable line
        return f"{kind} {event}"
