"""Willi (Hans im Glück, 1999): lowest card takes the trick, "Meinz!" claims it.

The engine is :class:`shared.games.willi.engine.Willi`; the rules as this
project plays them are in ``RULES.md`` beside this file.
"""

from shared.games.catalog import GameEntry

GAME = GameEntry(
    name="willi", title="Willi", engine="shared.games.willi.engine:Willi",
    min_seats=3, max_seats=4, default_seats=4, duplicate_deals=True)
