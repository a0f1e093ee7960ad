"""The words of the terminal client: cards, hands in each game's order, one line per move,
and a line of help for each action (its meaning from the game's RULES.md)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from shared.games.stich.cards import sort_key as stich_key
from shared.games.wacker.cards import ACTION_COUNTS, beer_value
from shared.games.willi.cards import sort_key as willi_key

#: Willi Stich suits as card players write them.
SUIT_SIGNS = {"C": "♣", "S": "♠", "H": "♥", "D": "♦"}
_WACKER_ACTIONS = list(ACTION_COUNTS)


@dataclass(frozen=True)
class Seats:
    """Names of the seats of a table, as the viewer reads them ("you" for the own seat)."""

    names: Sequence[str]
    me: int | None

    def __call__(self, seat: Any) -> str:
        if not isinstance(seat, int):
            return "-"
        if seat == self.me:
            return "you"
        if seat < len(self.names) and self.names[seat]:
            return self.names[seat]
        return "monster" if seat == 3 else f"seat {seat}"

    def possessive(self, seat: Any) -> str:
        """"your" or "Anna's"."""
        name = self(seat)
        return "your" if name == "you" else f"{name}'s"


def card_text(game: str, card: Any) -> str:
    """A card as players read it: Willi Stich with suit signs (♥9), others in their notation."""
    text = str(card)
    if game == "willi-stich" and text[:1] in SUIT_SIGNS:
        return SUIT_SIGNS[text[0]] + text[1:]
    return text


def cards_text(game: str, cards: Sequence[Any]) -> str:
    """Cards in display order, separated by spaces."""
    return " ".join(card_text(game, card) for card in sort_cards(game, cards))


def _wacker_key(card: str) -> tuple[int, int]:
    value = beer_value(card)
    if value is not None:
        return 0, value
    return 1, _WACKER_ACTIONS.index(card) if card in _WACKER_ACTIONS else len(_WACKER_ACTIONS)


#: Each game's own hand order: by suit or colour, then rank (Willi Wacker: beers, then actions).
CARD_ORDER: dict[str, Callable[[str], tuple[int, int]]] = {
    "willi": willi_key, "willi-stich": stich_key, "willi-wacker": _wacker_key,
}


def sort_cards(game: str, cards: Sequence[Any]) -> list[Any]:
    """Cards in the game's hand order (a game without one keeps the given order)."""
    key = CARD_ORDER.get(game)
    return list(cards) if key is None else sorted(cards, key=lambda card: key(str(card)))


def ordered_choices(game: str, legal: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The legal actions grouped by type (in the engine's order) and by card within a type,
    so that the numbered list reads like the sorted hand."""
    types = list(dict.fromkeys(action["type"] for action in legal))
    key = CARD_ORDER.get(game)

    def order(action: dict[str, Any]) -> tuple[int, tuple[int, int]]:
        card = action.get("card") or action.get("give")
        return types.index(action["type"]), key(card) if key and isinstance(card, str) else (0, 0)

    return sorted(legal, key=order)


# -- one line per event ------------------------------------------------------------------


def _scores(event: dict[str, Any], seats: Seats) -> str:
    return " · ".join(f"{seats(s)} {total}" for s, total in enumerate(event.get("scores", [])))


def _game_over(e: dict[str, Any], seats: Seats, game: str) -> str:
    winners = ", ".join(seats(s) for s in e.get("winners", []))
    return f"GAME OVER · winners: {winners} · totals: {_scores(e, seats)}"


def _round_over(e: dict[str, Any], seats: Seats, game: str) -> str:
    gained = e.get("awards") or e.get("points") or e.get("drunk") or []
    earned = ", ".join(f"{seats(s)} {g:+d}" for s, g in enumerate(gained))
    why = f" ({e['end'].replace('_', ' ')})" if e.get("end") else ""
    return f"round {e.get('round')} over{why} · {earned} · totals: {_scores(e, seats)}"


def _game_started(e: dict[str, Any], seats: Seats, game: str) -> str:
    def who(seat: dict[str, Any]) -> str:
        name = seats(seat["seat"])
        return f"{name} (bot)" if seat.get("bot") and "bot" not in name.lower() else name

    people = ", ".join(who(seat) for seat in e.get("seats", []))
    return f"game {e.get('game_no', 1)} starts · {people}"


Phrase = Callable[[dict[str, Any], Seats, str], str]


def _cards_or_plays(game: str, cards: Sequence[Any]) -> str:
    """Cards of a hand or tray (sorted), or the [seat, card] plays of a trick (in order)."""
    if all(isinstance(card, str) for card in cards):
        return cards_text(game, cards)
    return " ".join(card_text(game, play[1]) for play in cards)


def _say(template: str) -> Phrase:
    """A phrase from a template: {who} {whose} {card} {cards} {victim} and the event's fields.

    Verbs are written "take(s)": plain when the template's first name is "you", else with -s.
    """
    subject = re.search(r"\{(\w+)\}", template)

    def phrase(e: dict[str, Any], seats: Seats, game: str) -> str:
        fields = {**e, "who": seats(e.get("seat")), "whose": seats.possessive(e.get("seat")),
                  "card": card_text(game, e.get("card")), "give": card_text(game, e.get("give")),
                  "take": card_text(game, e.get("take")), "suit": card_text(game, e.get("suit", "")),
                  "cards": _cards_or_plays(game, e.get("cards") or []), "victim": seats(e.get("victim")),
                  "owner": seats(e.get("owner")), "winner": seats(e.get("winner")),
                  "leader": seats(e.get("leader")), "start": seats(e.get("start_player")),
                  "dealer": seats(e.get("dealer")), "token_by": seats(e.get("token_by")),
                  "victims": ", ".join(seats(v) for v in e.get("victims", [])),
                  "turned": card_text(game, e.get("turned")) if e.get("turned") else "no card"}
        is_you = subject is not None and fields.get(subject.group(1)) == "you"
        return _verbs(template.format(**fields), is_you)
    return phrase


PHRASES: dict[str, Phrase] = {
    # the table's own events
    "game_started": _game_started,
    "seat_bot": _say("the stand-in bot plays for {who} now"),
    "seat_reclaimed": _say("{who} took the seat back from the bot"),
    "timed_out": _say("{who} ran out of time: the default move follows"),
    "time_up": _say("time is up in round {round}"),
    "table_closed": _say("the table was closed ({reason})"),
    # shared by several games
    "round_over": _round_over,
    "game_over": _game_over,
    # Willi
    "round_started": _say("round {round} is dealt"),
    "discarded": _say("{who} discard(s) a card face down"),
    "play_started": _say("everybody has discarded · {leader} lead(s)"),
    "played": _say("{who} play(s) {card}"),
    "meinz": _say("{who} call(s) Meinz!"),
    "passed": _say("{who} pass(es)"),
    "trick_won": _say("{who} take(s) trick {trick}"),
    "exchanged": _say("{who} swap(s) {give} for {take} from the trick"),
    "no_exchange": _say("{who} keep(s) the hand"),
    # Willi Stich
    "deal": _say("round {round} dealt by {dealer}"),
    "trump": _say("{who} name(s) trumps: {suit}"),
    "call": _say("{who} call(s) {tricks}"),
    "play": _say("{who} play(s) {card}"),
    "trick": _say("{winner} take(s) the trick ({cards})"),
    "leave": _say("{who} leave(s) the game (total {score} stays)"),
    "round_cancelled": _say("round {round} is dealt again"),
    "chat": _say("{who}: {text}"),
    # Wie Waldi
    "draw": _say("{who} draw(s) from pile {pile}"),
    "return": _say("{who} put(s) a card back on pile {pile}"),
    "place_head": _say("{who} start(s) dog {dog} with {card}"),
    "attach": _say("{who} attach(es) {card} to dog {dog} (now {length} long)"),
    "dog_complete": _say("dog {dog} is complete: {owner} own(s) it"),
    "stop": _say("{who} call(s) Stop!"),
    # Willi Wacker
    "turn": _say("{whose} turn"),
    "lay": _say("{who} lay(s) {cards} as tray {tray}"),
    "extend": _say("{who} add(s) {cards} to tray {tray}"),
    "action": _say("{who} play(s) {card}"),
    "no_effect": _say("{whose} {card} has no effect"),
    "drunk": _say("{who} drink(s) tray {tray} ({beers} beers)"),
    "respond": _say("{who} answer(s) with {card}"),
    "pass": _say("{who} pass(es)"),
    "schnorrer": _say("{who} schnorr(s) from {victims}"),
    "card_taken": _say("{who} take(s) a card from {victim}"),
    "card_kept": _say("{who} keep(s) the card"),
    "tray_stolen": _say("{who} steal(s) tray {tray} from {victim}"),
    "tray_kept": _say("{who} keep(s) tray {tray}"),
    "tray_discarded": _say("{whose} tray {tray} goes to the discard pile"),
}
#: Event lines that differ between games under one type name.
GAME_PHRASES: dict[tuple[str, str], Phrase] = {
    ("willi-stich", "deal"): _say("round {round} ({kind}, {hand_size} cards) dealt by {dealer}"
                                  " · turned: {turned}"),
    ("willi-wacker", "deal"): _say("round {round} dealt by {dealer} · {talon_size} cards in the talon"),
    ("willi-wacker", "draw"): _say("{who} draw(s) {count}"),
    ("wie-waldi", "round_started"): _say("round {round} starts: everybody builds at once"),
    ("willi", "round_started"): _say("round {round} is dealt · {start} lead(s) the first trick"),
}


def _verbs(line: str, is_you: bool) -> str:
    """Resolve "take(s)", "pass(es)": plain after "you", else the third person."""
    for plain, third in (("(es)", "es"), ("(s)", "s")):
        line = line.replace(plain, "" if is_you else third)
    return line


def event_line(event: dict[str, Any], seats: Seats, game: str) -> str:
    """One compact line for an event ("Anna plays ♥9", "Bruno calls 2")."""
    kind = str(event.get("type", "?"))
    phrase = GAME_PHRASES.get((game, kind)) or PHRASES.get(kind)
    if phrase is None:
        rest = " ".join(f"{k}={v}" for k, v in event.items() if k not in ("type", "seat"))
        return f"{seats(event.get('seat'))}: {kind} {rest}".strip()
    try:
        return phrase(event, seats, game)
    except (KeyError, ValueError, TypeError):  # a field missing: still one readable line
        return f"{kind} {event}"


# -- one line of help per action -----------------------------------------------------------

#: What an action does, for the numbered choices (meaning from each game's RULES.md).
HELP: dict[tuple[str, str], str] = {
    ("willi", "discard"): "lay this card aside face down for the round",
    ("willi", "play"): "play it (match the lead's colour or number if you can)",
    ("willi", "meinz"): "Meinz! claim this trick for yourself, whatever comes after",
    ("willi", "pass"): "no claim now / keep your hand as it is",
    ("willi", "exchange"): "swap a hand card for a trick card of the same colour",
    ("willi-stich", "trump"): "as dealer, name the trump suit",
    ("willi-stich", "call"): "say how many tricks you will take (exactly right scores)",
    ("willi-stich", "play"): "play it (follow the led suit if you can)",
    ("wie-waldi", "draw"): "take the top card of this pile of yours into your hand",
    ("wie-waldi", "return"): "put the held card back under its pile",
    ("wie-waldi", "place_head"): "lay the held head: it starts a new dog",
    ("wie-waldi", "attach"): "attach the held card to this dog (colours must meet)",
    ("willi-wacker", "lay"): "lay these beers as a new tray (a set or a run)",
    ("willi-wacker", "extend"): "add these beers to your tray (it stays a set or run)",
    ("willi-wacker", "respond"): "answer the duel with this card",
    ("willi-wacker", "pass"): "give in / end your turn",
}
#: Willi Wacker's action cards each do something else.
ACTION_CARD_HELP = {
    "TRINK": "drink your tray: it is safe and its beers score",
    "ZAPFENSTREICH": "send another seat's tray to the discard pile (nothing answers it)",
    "FLORA": "duel for another seat's tray (PRUEGEL answers; the last PRUEGEL wins)",
    "SCHNORRER": "take a hidden card from every other hand (each may answer PRUEGEL)",
    "PRUEGEL": "no effect on your own turn",
}
RESPOND_HELP = {
    "PRUEGEL": "answer with PRUEGEL: the last PRUEGEL wins the duel",
    "ZAPFENSTREICH": "end the FLORA duel: the tray goes to the discard pile",
}


def action_text(game: str, action: dict[str, Any], seats: Seats) -> str:
    """The action in a few words: "play ♥9", "call 2", "exchange R5 for R7", "attach to d3"."""
    kind = action["type"]
    if "give" in action:
        return f"{kind} {card_text(game, action['give'])} for {card_text(game, action['take'])}"
    parts = ["play" if kind == "action" else kind]
    if "card" in action:
        parts.append(card_text(game, action["card"]))
    if "cards" in action:
        parts.append(cards_text(game, action["cards"]))
    for key, word in (("tricks", ""), ("suit", ""), ("pile", "pile "), ("dog", "to dog "),
                      ("tray", "on tray " if kind == "action" else "to tray ")):
        if key in action and action[key] is not None:
            value = card_text(game, action[key]) if key == "suit" else action[key]
            parts.append(f"{word}{value}")
    return " ".join(parts)


def action_help(game: str, action: dict[str, Any]) -> str:
    """What the action means in the rules."""
    card = action.get("card")
    if game == "willi-wacker" and action["type"] == "action":
        return ACTION_CARD_HELP.get(str(card), "")
    if game == "willi-wacker" and action["type"] == "respond":
        return RESPOND_HELP.get(str(card), "")
    return HELP.get((game, action["type"]), "")
