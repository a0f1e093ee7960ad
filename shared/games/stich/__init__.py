"""Willi Stich: 19 rounds of calling and taking tricks with two 32-card decks.

The engine is :class:`shared.games.stich.engine.WilliStich`; the rules, every
ruling and the action vocabulary are in ``RULES.md`` beside this file.
"""

from shared.games.catalog import GameEntry, Option

GAME = GameEntry(
    name="willi-stich", title="Willi Stich",
    engine="shared.games.stich.engine:WilliStich",
    min_seats=3, max_seats=6, default_seats=4, leave_and_chat=True, duplicate_deals=True,
    options=(
        Option("start_round", 1, "the first round played (1..19); the game always ends after round 19",
               minimum=1, maximum=19),
        Option("first_dealer", 0, "the seat that deals the first round played; the deal passes on "
                                  "into the table's next game", minimum=0),
    ),
    short_options={"start_round": 17},
    carried_over={"first_dealer": "next_dealer"})
