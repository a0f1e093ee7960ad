"""Each history entry as a watcher gets it: as it was then, built once for every watcher."""

from __future__ import annotations

from services.tournament.core.rounds import Kind
from services.tournament.core.seating import SeatedTable
from services.tournament.core.standings import GameResult
from services.tournament.model import Entry, Settings, Tournament
from services.tournament.news import Replay
from shared.api.stammtisch.v1 import tournament_pb2
from shared.sdk.tournament_cli import describe

PLAYERS = [f"{i:032x}" for i in range(6)]


def tournament(duplicate: bool = False) -> Tournament:
    settings = Settings("t", "willi-stich", Kind.SERIES, {}, 0.0, 6, 1, 1, 3, 3, 6, duplicate=duplicate)
    return Tournament("ab" * 16, "org", settings, 0.0, deal_secret="s")


def replayed(duplicate: bool = False) -> tuple[Replay, list[Entry]]:
    """A 6-player series of one round at two tables of 3, its time cut, played to the end."""
    t = tournament(duplicate)
    entries: list[Entry] = [{"change": "created"}]
    for order, player in enumerate(PLAYERS):
        t.register(player, f"p{order}", 1500.0)
        entries.append({"change": "registered", "player_id": player})
    entries.append(t.start(0.0))
    t.seat(1, [SeatedTable(0, tuple(PLAYERS[:3])), SeatedTable(1, tuple(PLAYERS[3:]))], 0.0)
    entries.append(t.announce_round(1, 0.0))
    entries.append({"change": "game_finished", "round": 1, "table": 0, "game": 1})
    entries.append(t.cut_round(1))
    entries.append({"change": "game_finished", "round": 1, "table": 1, "game": 1})
    entries.append(t.finish_round(1))
    entries.append(t.finish())
    results = [GameResult(1, 0, 1, tuple(PLAYERS[:3]), (10, 5, 0)),
               GameResult(1, 1, 1, tuple(PLAYERS[3:]), (0, 5, 10))]
    replay = Replay()
    replay.add(list(enumerate(entries, 1)), t, results)
    return replay, entries


def test_every_entry_tells_its_own_time() -> None:
    replay, entries = replayed()
    news = [replay.response(index, PLAYERS[0]) for index in range(len(entries))]
    by_change = {item.change: item for item in news}
    assert by_change["registered"].status == tournament_pb2.TOURNAMENT_STATUS_REGISTRATION
    assert by_change["seated"].status == tournament_pb2.TOURNAMENT_STATUS_RUNNING
    assert by_change["finished"].status == tournament_pb2.TOURNAMENT_STATUS_FINISHED
    assert by_change["time_up"].round_number == by_change["round_finished"].round_number == 1
    seated = by_change["seated"]
    assert not seated.round.finished and [t.games_finished for t in seated.round.tables] == [0, 0]
    assert seated.your_seat.table_id == f"{'ab' * 16}-r1-t1" and seated.your_seat.seat == 0
    first_game = news[entries.index({"change": "game_finished", "round": 1, "table": 0, "game": 1})]
    assert [line.games for line in first_game.standings if line.player_id in PLAYERS[3:]] == [0, 0, 0]


def test_a_response_is_built_once_and_shared_by_every_watcher() -> None:
    replay, entries = replayed()
    last = len(entries) - 1
    assert replay.response(last, PLAYERS[0]) is replay.response(last, PLAYERS[4])
    seated = next(i for i, entry in enumerate(entries) if entry["change"] == "seated")
    mine, theirs = replay.response(seated, PLAYERS[0]), replay.response(seated, PLAYERS[4])
    assert (mine.your_seat.table, theirs.your_seat.table) == (1, 2)
    assert not replay.response(seated, "a spectator").HasField("your_seat")


def test_duplicate_points_are_provisional_until_the_deal_is_complete() -> None:
    replay, entries = replayed(duplicate=True)
    games = [replay.response(i, "") for i, entry in enumerate(entries) if entry["change"] == "game_finished"]
    assert [game.result.provisional for game in games] == [True, False]
    assert list(games[1].result.points) == ["0", "1/2", "1"]  # seat by seat against table 1
    plain, plain_entries = replayed(duplicate=False)
    assert not any(plain.response(i, "").result.provisional
                   for i, entry in enumerate(plain_entries) if entry["change"] == "game_finished")


def test_the_cli_names_the_round_of_a_round_end_and_marks_provisional_points() -> None:
    replay, entries = replayed(duplicate=True)
    lines = [describe(replay.response(index, "")) for index in range(len(entries))]
    changes = [str(entry["change"]) for entry in entries]
    assert lines[changes.index("time_up")].endswith("time_up: round 1")
    assert lines[changes.index("round_finished")].startswith(f"[{changes.index('round_finished') + 1}] "
                                                             "round_finished: round 1")
    assert "(points provisional" in lines[changes.index("game_finished")]
