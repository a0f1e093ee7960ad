"""Wie Waldi (Abacusspiele): everybody builds dachshunds at once; see RULES.md."""

from shared.games.catalog import GameEntry, Option

GAME = GameEntry(
    name="wie-waldi", title="Wie Waldi",
    engine="shared.games.waldi.engine:WieWaldi",
    min_seats=2, max_seats=4, default_seats=3, simultaneous=True,
    options=(
        # A round ends by Stop within about two minutes of quick play; the limit ends one
        # that never would, so that every game ends: at most 3 rounds times the limit.
        Option("round_seconds", 180, "time limit of a round in seconds (above 0, at most 3600); "
                                     "null, for the pure engine only: no limit",
               types=(int, float), maximum=3600),
    ))
