"""The results as files: the standings with their tie-break values and every game's totals,
as CSV (one table each) or JSON (both), the formats ExportResults and the page's links give."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from services.tournament.convert import standings_of
from services.tournament.core.standings import GameResult, game_points_of
from services.tournament.model import Tournament

STANDINGS_COLUMNS = ("rank", "player_id", "name", "points", "points_exact", "game_points", "wins", "games",
                     "reached_round", "reached_place", "withdrawn")
GAMES_COLUMNS = ("round", "table", "game", "table_id", "seat", "player_id", "name", "total", "points")
CSV_TYPE = "text/csv; charset=utf-8"
JSON_TYPE = "application/json"


def standings_rows(tournament: Tournament, recorded: Sequence[GameResult]) -> list[dict[str, Any]]:
    """One dict per standing line, best first, its tie-breaks under ``tie_breaks``."""
    players = {p.player_id: p for p in tournament.players}
    return [{"rank": rank, "player_id": line.player_id, "name": players[line.player_id].name,
             "points": float(line.points), "points_exact": str(line.points), "game_points": line.game_points,
             "wins": line.wins, "games": line.games, "reached_round": line.reached,
             "reached_place": line.last_place, "withdrawn": players[line.player_id].last_round is not None,
             "tie_breaks": {name: str(line.tie_break(name)) for name in tournament.settings.tie_breaks}}
            for rank, line in enumerate(standings_of(tournament, recorded), start=1)]


def games_rows(tournament: Tournament, recorded: Sequence[GameResult]) -> list[dict[str, Any]]:
    """One dict per recorded game, in (round, table, game) order, with every seat's total and points."""
    names = {p.player_id: p.name for p in tournament.players}
    points = game_points_of(recorded, tournament.settings.duplicate)
    return [{"round": r.round, "table": r.table + 1, "game": r.game,
             "table_id": tournament.table_id(r.round, r.table),
             "seats": [{"player_id": player, "name": names.get(player, ""), "total": total,
                        "points": str(earned)}
                       for player, total, earned in zip(r.seats, r.scores,
                                                        points[(r.round, r.table, r.game)], strict=True)]}
            for r in recorded]


def standings_csv(tournament: Tournament, recorded: Sequence[GameResult]) -> bytes:
    """The standings, one line per player, a column per tie-break."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*STANDINGS_COLUMNS, *tournament.settings.tie_breaks])
    for row in standings_rows(tournament, recorded):
        writer.writerow([*(_cell(row[column]) for column in STANDINGS_COLUMNS), *row["tie_breaks"].values()])
    return out.getvalue().encode()


def games_csv(tournament: Tournament, recorded: Sequence[GameResult]) -> bytes:
    """Every seat of every recorded game, one line each."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(GAMES_COLUMNS)
    for game in games_rows(tournament, recorded):
        for seat, row in enumerate(game["seats"]):
            writer.writerow([game["round"], game["table"], game["game"], game["table_id"], seat,
                             row["player_id"], _cell(row["name"]), row["total"], row["points"]])
    return out.getvalue().encode()


def results_json(tournament: Tournament, recorded: Sequence[GameResult]) -> bytes:
    """The tournament, its standings and its games in one document."""
    s = tournament.settings
    return json.dumps({
        "tournament": {"id": tournament.tournament_id, "name": s.name, "game": s.game, "format": str(s.kind),
                       "status": str(tournament.status), "tie_breaks": list(s.tie_breaks)},
        "standings": standings_rows(tournament, recorded),
        "games": games_rows(tournament, recorded)}, ensure_ascii=False, indent=1).encode()


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run as a formula (a name starting with = + - @)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
