"""Tournament requests checked into settings, and documents and standings into messages."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from services.lobby.catalog import (
    check_seat_count,
    game_options,
    new_game,
    options_proto,
    turn_seconds,
)
from services.tournament.core.rounds import FirstSeating, Kind, current_standings
from services.tournament.core.standings import GameResult, Standing, check_tie_breaks
from services.tournament.model import Settings, Status, Tournament
from shared.api.stammtisch.v1 import tournament_pb2
from shared.games.catalog import CATALOGUE, entry
from shared.ids import check_player_id
from shared.rpc.catalog import game_named
from shared.rpc.errors import invalid
from shared.rpc.times import timestamp, unix_seconds

MAX_NAME = 48
MAX_CAPACITY = 10_000
MAX_ROUNDS = 50
MAX_GAMES = 20
MAX_CHECK_IN = 3600
MAX_ROUND_SECONDS = 86_400
MAX_FORBIDDEN_PAIRS = 1000
#: Games whose deal is fixed per round of play by the seed (the catalogue says): duplicate deals.
DUPLICATE_DEAL_GAMES = frozenset(name for name, game in CATALOGUE.items() if game.duplicate_deals)

_KINDS = {tournament_pb2.TOURNAMENT_FORMAT_SERIES: Kind.SERIES,
          tournament_pb2.TOURNAMENT_FORMAT_KNOCKOUT: Kind.KNOCKOUT}
_KIND_ENUMS = {kind: number for number, kind in _KINDS.items()}
_STATUS = {
    Status.REGISTRATION: tournament_pb2.TOURNAMENT_STATUS_REGISTRATION,
    Status.CHECK_IN: tournament_pb2.TOURNAMENT_STATUS_CHECK_IN,
    Status.RUNNING: tournament_pb2.TOURNAMENT_STATUS_RUNNING,
    Status.PAUSED: tournament_pb2.TOURNAMENT_STATUS_PAUSED,
    Status.FINISHED: tournament_pb2.TOURNAMENT_STATUS_FINISHED,
    Status.CANCELLED: tournament_pb2.TOURNAMENT_STATUS_CANCELLED,
}


def check_within(name: str, value: float, low: float, high: float) -> None:
    if not low <= value <= high:
        raise invalid(f"{name} must be {low} to {high}, got {value}")


def settings_of(request: tournament_pb2.TournamentSettings, default_turn: float) -> Settings:
    """Checked settings; INVALID_ARGUMENT with the reason for anything that cannot be played."""
    name = request.name.strip()
    if not 1 <= len(name) <= MAX_NAME or not name.isprintable():
        raise invalid(f"name must be 1 to {MAX_NAME} printable characters")
    game = game_named(request.game)
    if request.format not in _KINDS:
        raise invalid("format must be TOURNAMENT_FORMAT_SERIES or TOURNAMENT_FORMAT_KNOCKOUT")
    kind = _KINDS[request.format]
    known = entry(game)
    check_seat_count(game, request.table_size)
    options = game_options(game, request.options)
    new_game(game, request.table_size, options, seed=0)
    check_within("capacity", request.capacity, 2, MAX_CAPACITY)
    check_within("games_per_round", request.games_per_round, 1, MAX_GAMES)
    rounds = request.rounds if kind == Kind.SERIES else 0
    if kind == Kind.SERIES:
        check_within("rounds", rounds, 1, MAX_ROUNDS)
        check_within("late_entry_until_round", request.late_entry_until_round, 0, rounds)
    keep = request.keep or 1
    if kind == Kind.KNOCKOUT:
        check_within("keep", keep, 1, known.min_seats - 1)
    if request.duplicate_deals and game not in DUPLICATE_DEAL_GAMES:
        raise invalid(f"duplicate deals need a game dealt per round by its seed: "
                      f"{', '.join(sorted(DUPLICATE_DEAL_GAMES))}")
    check_within("round_seconds", request.round_seconds, 0, MAX_ROUND_SECONDS)
    check_within("check_in_seconds", request.check_in_seconds, 0, MAX_CHECK_IN)
    try:
        tie_breaks = check_tie_breaks(list(request.tie_breaks))
    except ValueError as exc:
        raise invalid(f"tie_breaks: {exc}") from exc
    return Settings(
        name=name, game=game, kind=kind, options=options,
        turn_seconds=turn_seconds(request.options, default_turn), capacity=request.capacity,
        rounds=rounds, games_per_round=request.games_per_round, table_size=request.table_size,
        min_size=known.min_seats, max_size=known.max_seats,
        start_at=unix_seconds(request.start_at) if request.HasField("start_at") else 0.0,
        round_seconds=float(request.round_seconds),
        first_seating=(FirstSeating.RATING if request.first_seating == tournament_pb2.FIRST_SEATING_RATING
                       else FirstSeating.RANDOM),
        keep=keep if kind == Kind.KNOCKOUT else 1, duplicate=request.duplicate_deals,
        late_entry_until_round=request.late_entry_until_round if kind == Kind.SERIES else 0,
        check_in_seconds=float(request.check_in_seconds),
        no_show_bot=request.no_show == tournament_pb2.NO_SHOW_BOT,
        manual_rounds=request.manual_rounds, tie_breaks=list(tie_breaks))


def forbidden_pairs_of(pairs: Sequence[tournament_pb2.ForbiddenPair]) -> list[tuple[str, str]]:
    """Checked pairs of player ids; INVALID_ARGUMENT for a malformed id, a player paired with
    itself, or too many pairs."""
    if len(pairs) > MAX_FORBIDDEN_PAIRS:
        raise invalid(f"at most {MAX_FORBIDDEN_PAIRS} forbidden pairs")
    checked = []
    for item in pairs:
        a, b = check_player_id(item.player_a), check_player_id(item.player_b)
        if a == b:
            raise invalid(f"a player cannot be forbidden to meet themselves ({a})")
        checked.append((a, b))
    return checked



def status_proto(status: Status) -> tournament_pb2.TournamentStatus.ValueType:
    """The proto enum of a status."""
    return _STATUS[status]


def settings_proto(settings: Settings) -> tournament_pb2.TournamentSettings:
    """The settings as the organizer gave them (after defaults)."""
    return tournament_pb2.TournamentSettings(
        name=settings.name, game=settings.game, format=_KIND_ENUMS[settings.kind],
        options=options_proto(settings.options, settings.turn_seconds), capacity=settings.capacity,
        rounds=settings.rounds, games_per_round=settings.games_per_round,
        table_size=settings.table_size,
        start_at=timestamp(settings.start_at) if settings.start_at else None,
        round_seconds=round(settings.round_seconds),
        first_seating=(tournament_pb2.FIRST_SEATING_RATING if settings.first_seating == FirstSeating.RATING
                       else tournament_pb2.FIRST_SEATING_RANDOM),
        keep=settings.keep, duplicate_deals=settings.duplicate,
        late_entry_until_round=settings.late_entry_until_round,
        check_in_seconds=round(settings.check_in_seconds),
        no_show=tournament_pb2.NO_SHOW_BOT if settings.no_show_bot else tournament_pb2.NO_SHOW_DROP,
        manual_rounds=settings.manual_rounds, tie_breaks=settings.tie_breaks)


def _pairs_proto(pairs: Sequence[Sequence[str]]) -> list[tournament_pb2.ForbiddenPair]:
    return [tournament_pb2.ForbiddenPair(player_a=a, player_b=b) for a, b in pairs]


def round_proto(tournament: Tournament, number: int,
                recorded: Sequence[GameResult]) -> tournament_pb2.TournamentRound:
    """One seated round with each table's finished games."""
    seated = tournament.rounds[number - 1]
    return tournament_pb2.TournamentRound(
        round=number, finished=seated.finished, started_at=timestamp(seated.started_at),
        tables=[tournament_pb2.TournamentTable(
            table=index + 1, table_id=tournament.table_id(number, index), player_ids=seats,
            games_finished=sum(1 for r in recorded if r.round == number and r.table == index))
            for index, seats in enumerate(seated.tables)],
        forced_pairs=_pairs_proto(seated.forced))


def tournament_proto(tournament: Tournament, recorded: Sequence[GameResult]) -> tournament_pb2.Tournament:
    """The whole document as clients see it."""
    return tournament_pb2.Tournament(
        tournament_id=tournament.tournament_id, organizer_id=tournament.organizer_id,
        settings=settings_proto(tournament.settings), status=_STATUS[tournament.status],
        players=[tournament_pb2.TournamentPlayer(
            player_id=p.player_id, name=p.name, rating=p.rating, first_round=p.first_round,
            last_round=p.last_round or 0, checked_in=p.checked_in, bot=p.bot) for p in tournament.players],
        current_round=len(tournament.announced_rounds()),
        rounds=[round_proto(tournament, round_.number, recorded) for round_ in tournament.announced_rounds()],
        created_at=timestamp(tournament.created_at),
        awaiting_next_round=tournament.awaiting_next_round,
        forbidden_pairs=_pairs_proto(tournament.forbidden_pairs))


def standings_of(tournament: Tournament, recorded: Sequence[GameResult]) -> list[Standing]:
    """The standings of the people (bot entries left out), recomputed from the results."""
    bots = {p.player_id for p in tournament.players if p.bot}
    lines = current_standings(tournament.format(), tournament.core_players(),
                              [r.seated() for r in tournament.announced_rounds()], recorded)
    return [line for line in lines if line.player_id not in bots]


def standings_proto(tournament: Tournament,
                    recorded: Sequence[GameResult]) -> list[tournament_pb2.StandingLine]:
    """Standing lines, rank 1 first."""
    names = {p.player_id: p for p in tournament.players}
    return [tournament_pb2.StandingLine(
        rank=rank, player_id=line.player_id, name=names[line.player_id].name,
        points=float(line.points), points_exact=str(line.points), game_points=line.game_points,
        wins=line.wins, games=line.games, reached_round=line.reached, reached_place=line.last_place,
        withdrawn=names[line.player_id].last_round is not None,
        tie_breaks=[tie_break_proto(name, line.tie_break(name)) for name in tournament.settings.tie_breaks])
        for rank, line in enumerate(standings_of(tournament, recorded), start=1)]


def tie_break_proto(name: str, value: int | Fraction) -> tournament_pb2.TieBreakValue:
    """One tie-break's value of a standing line."""
    return tournament_pb2.TieBreakValue(name=name, value=float(value), exact=str(value))


def result_proto(tournament: Tournament, result: GameResult, points: Sequence[object],
                 provisional: bool) -> tournament_pb2.TournamentGameResult:
    """One recorded game with the points the rule gave each seat (``provisional``: as far as
    known; other tables of its duplicate deal have not reported yet)."""
    return tournament_pb2.TournamentGameResult(
        round=result.round, table=result.table + 1, game=result.game,
        table_id=tournament.table_id(result.round, result.table), player_ids=result.seats,
        scores=result.scores, points=[str(p) for p in points], provisional=provisional)

