"""Willi Wacker: lay trays of beer, drink them, and steal or smash everyone else's.

The engine is :class:`shared.games.wacker.engine.WilliWacker`; the rules and
rulings it implements are in ``RULES.md`` beside this file.
"""

from shared.games.catalog import GameEntry, Option

GAME = GameEntry(
    name="willi-wacker", title="Willi Wacker",
    engine="shared.games.wacker.engine:WilliWacker",
    min_seats=3, max_seats=6, default_seats=4, ordered_hands=True,
    options=(
        Option("first_dealer", 0, "the seat that deals the first round", minimum=0),
        Option("target", 200, "the game ends after the round in which a total reaches it", minimum=1),
        Option("max_rounds", 100, "safety net: the game also ends after this round", minimum=1),
    ),
    short_options={"target": 40})
