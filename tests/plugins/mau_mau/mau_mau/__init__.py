"""Mau-Mau: get rid of your cards by matching the top card's suit or rank; see RULES.md.

Only the catalogue entry lives here: the catalogue imports this module when it
discovers the games, so the engine (``mau_mau.engine:MauMau``) is named, not imported.
"""

from shared.games.catalog import GameEntry, Option

GAME = GameEntry(
    name="mau-mau", title="Mau-Mau", engine="mau_mau.engine:MauMau",
    min_seats=2, max_seats=5, default_seats=3, duplicate_deals=False,
    options=(Option("hand_size", 5, "cards dealt to each seat", minimum=3, maximum=7),))
