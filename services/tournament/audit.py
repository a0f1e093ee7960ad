"""Standings recomputed from the stored game logs alone: the check on the director's bookkeeping.

The director's standings come from the results it recorded off JetStream;
these come from the final commits in each tournament table's own log in the
table store. Tests and the tournament load test compare the two.
"""

from __future__ import annotations

from services.tournament.core.rounds import current_standings
from services.tournament.core.standings import GameResult, seat_scores
from services.tournament.model import Tournament
from shared.infra.runtime import Runtime
from shared.tables.log import TableLog

#: Commits read per table at most (far above any game series of one round).
MAX_COMMITS = 1_000_000


async def results_from_logs(runtime: Runtime, tournament: Tournament) -> list[GameResult]:
    """Every ``game_over`` in the logs of the tournament's tables, seats as the rounds seated them."""
    tables = TableLog(runtime)
    results = []
    for round_ in tournament.rounds:
        for index, seats in enumerate(round_.tables):
            if not any(seats):
                continue  # a table of bots only is never created
            log = await tables.log_after(tournament.table_id(round_.number, index), 0, limit=MAX_COMMITS)
            results += [GameResult(round_.number, index, record.meta.game_no, tuple(seats),
                                   seat_scores(event["scores"], len(seats)))
                        for record in log for event in record.events if event.get("type") == "game_over"]
    return results


async def standings_from_logs(runtime: Runtime, tournament: Tournament) -> list[tuple[str, str]]:
    """(player id, exact points) in standings order, from the table logs (bot entries left out)."""
    bots = {p.player_id for p in tournament.players if p.bot}
    lines = current_standings(tournament.format(), tournament.core_players(),
                              [r.seated() for r in tournament.rounds],
                              await results_from_logs(runtime, tournament))
    return [(line.player_id, str(line.points)) for line in lines if line.player_id not in bots]
