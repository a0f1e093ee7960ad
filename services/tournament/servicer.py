"""The TournamentService servicer: requests become document changes; the director does the rest."""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import AsyncIterator, Callable

import grpc

from services.scoring.store import ScoreStore
from services.tournament import convert, export
from services.tournament.model import Entry, Tournament
from services.tournament.news import LAST
from services.tournament.registrations import RegistrationBatches
from services.tournament.schedules import ScheduleStore, schedule_of, schedule_proto
from services.tournament.store import TournamentStore
from services.tournament.tables import TournamentTables
from services.tournament.watchers import TournamentWatchers
from shared.api.stammtisch.v1 import tournament_pb2, tournament_pb2_grpc
from shared.ids import IdError, check_player_id, check_tournament_id
from shared.infra.runtime import Runtime
from shared.rpc.auth import caller
from shared.rpc.catalog import game_or_all
from shared.rpc.errors import ServiceError, invalid, not_found

#: ExportResults' formats: (file name suffix, content type, writer).
EXPORTS = {
    tournament_pb2.EXPORT_FORMAT_STANDINGS_CSV: ("standings.csv", export.CSV_TYPE, export.standings_csv),
    tournament_pb2.EXPORT_FORMAT_GAMES_CSV: ("games.csv", export.CSV_TYPE, export.games_csv),
    tournament_pb2.EXPORT_FORMAT_JSON: ("results.json", export.JSON_TYPE, export.results_json),
}
#: A change of the document: mutates it, returns its history entry.
Change = Callable[[Tournament], Entry]
DEFAULT_LIST = 50
MAX_LIST = 200


class TournamentServicer(tournament_pb2_grpc.TournamentServiceServicer):
    """Every call acts as the token's player; organizer controls check the organizer."""

    def __init__(self, runtime: Runtime, store: TournamentStore, tables: TournamentTables,
                 watchers: TournamentWatchers, schedules: ScheduleStore) -> None:
        self.store = store
        self.schedules = schedules
        self.watchers = watchers
        self.tables = tables
        self.scores = ScoreStore(runtime)
        self.default_turn = runtime.settings.turn_seconds
        self.registrations = RegistrationBatches(store, self._reply)

    async def _reply(self, tournament: Tournament) -> tournament_pb2.Tournament:
        recorded = [result for result, _extra in await self.store.results(tournament.tournament_id)]
        return convert.tournament_proto(tournament, recorded)

    async def _change(self, tournament_id: str, fn: Change) -> tournament_pb2.Tournament:
        tournament, _entry = await self.store.change(check_tournament_id(tournament_id), fn)
        return await self._reply(tournament)

    async def CreateTournament(self, request: tournament_pb2.CreateTournamentRequest,
                               context: grpc.aio.ServicerContext) -> tournament_pb2.CreateTournamentResponse:
        settings = convert.settings_of(request.settings, self.default_turn)
        tournament = Tournament(uuid.uuid4().hex, caller().player_id, settings, time.time(),
                                deal_secret=secrets.token_hex(16))
        await self.store.add(tournament)
        return tournament_pb2.CreateTournamentResponse(tournament=await self._reply(tournament))

    async def GetTournament(self, request: tournament_pb2.GetTournamentRequest,
                            context: grpc.aio.ServicerContext) -> tournament_pb2.GetTournamentResponse:
        tournament = await self.store.get(check_tournament_id(request.tournament_id))
        return tournament_pb2.GetTournamentResponse(tournament=await self._reply(tournament))

    async def ListTournaments(self, request: tournament_pb2.ListTournamentsRequest,
                              context: grpc.aio.ServicerContext) -> tournament_pb2.ListTournamentsResponse:
        if not 0 <= request.limit <= MAX_LIST:
            raise invalid(f"limit must be 0 (default {DEFAULT_LIST}) to {MAX_LIST}")
        game = game_or_all(request.game)
        found = await self.store.newest(request.limit or DEFAULT_LIST)
        if game is not None:
            found = [t for t in found if t.settings.game == game]
        return tournament_pb2.ListTournamentsResponse(
            tournaments=[await self._reply(t) for t in found])

    async def Register(self, request: tournament_pb2.RegisterRequest,
                       context: grpc.aio.ServicerContext) -> tournament_pb2.RegisterResponse:
        who = caller()
        tournament = await self.store.get(check_tournament_id(request.tournament_id))
        ratings = await self.scores.conservative_ratings(tournament.settings.game, [who.player_id])
        reply = await self.registrations.register(tournament.tournament_id, who.player_id, who.name,
                                                  ratings[who.player_id])
        assert isinstance(reply, tournament_pb2.Tournament)
        return tournament_pb2.RegisterResponse(tournament=reply)

    async def _withdraw(self, tournament_id: str, player_id: str, change: str) -> tournament_pb2.Tournament:
        tournament, _entry = await self.store.change(check_tournament_id(tournament_id),
                                                     lambda t: t.withdraw(player_id, change))
        current = tournament.current
        if current is not None and not current.finished:
            seat = tournament.seat_of(player_id, current.number)
            entrant = tournament.entrant(player_id)
            if seat is not None and entrant is not None:
                await self.tables.leave(tournament.table_id(current.number, seat[0]), player_id, entrant.name)
        return await self._reply(tournament)

    async def Withdraw(self, request: tournament_pb2.WithdrawRequest,
                       context: grpc.aio.ServicerContext) -> tournament_pb2.WithdrawResponse:
        reply = await self._withdraw(request.tournament_id, caller().player_id, "withdrawn")
        return tournament_pb2.WithdrawResponse(tournament=reply)

    async def CheckIn(self, request: tournament_pb2.CheckInRequest,
                      context: grpc.aio.ServicerContext) -> tournament_pb2.CheckInResponse:
        who = caller()
        reply = await self._change(request.tournament_id, lambda t: t.check_in(who.player_id))
        return tournament_pb2.CheckInResponse(tournament=reply)

    def _organizer(self, action: str) -> Change:
        """A change that the organizer alone may make."""
        who = caller()

        def change(tournament: Tournament) -> Entry:
            tournament.check_organizer(who.player_id)
            if action == "start":
                return tournament.start(time.time())
            entry: Entry = getattr(tournament, action)()
            return entry

        return change

    async def StartTournament(self, request: tournament_pb2.StartTournamentRequest,
                              context: grpc.aio.ServicerContext) -> tournament_pb2.StartTournamentResponse:
        reply = await self._change(request.tournament_id, self._organizer("start"))
        return tournament_pb2.StartTournamentResponse(tournament=reply)

    async def PauseTournament(self, request: tournament_pb2.PauseTournamentRequest,
                              context: grpc.aio.ServicerContext) -> tournament_pb2.PauseTournamentResponse:
        reply = await self._change(request.tournament_id, self._organizer("pause"))
        return tournament_pb2.PauseTournamentResponse(tournament=reply)

    async def ResumeTournament(self, request: tournament_pb2.ResumeTournamentRequest,
                               context: grpc.aio.ServicerContext) -> tournament_pb2.ResumeTournamentResponse:
        reply = await self._change(request.tournament_id, self._organizer("resume"))
        return tournament_pb2.ResumeTournamentResponse(tournament=reply)

    async def CancelTournament(self, request: tournament_pb2.CancelTournamentRequest,
                               context: grpc.aio.ServicerContext) -> tournament_pb2.CancelTournamentResponse:
        reply = await self._change(request.tournament_id, self._organizer("cancel"))
        return tournament_pb2.CancelTournamentResponse(tournament=reply)

    async def RemovePlayer(self, request: tournament_pb2.RemovePlayerRequest,
                           context: grpc.aio.ServicerContext) -> tournament_pb2.RemovePlayerResponse:
        tournament = await self.store.get(check_tournament_id(request.tournament_id))
        tournament.check_organizer(caller().player_id)
        reply = await self._withdraw(request.tournament_id, check_player_id(request.player_id), "removed")
        return tournament_pb2.RemovePlayerResponse(tournament=reply)

    async def StartNextRound(self, request: tournament_pb2.StartNextRoundRequest,
                             context: grpc.aio.ServicerContext) -> tournament_pb2.StartNextRoundResponse:
        reply = await self._change(request.tournament_id, self._organizer("start_next_round"))
        return tournament_pb2.StartNextRoundResponse(tournament=reply)

    async def SetForbiddenPairs(
            self, request: tournament_pb2.SetForbiddenPairsRequest,
            context: grpc.aio.ServicerContext) -> tournament_pb2.SetForbiddenPairsResponse:
        pairs = convert.forbidden_pairs_of(request.pairs)
        who = caller()

        def change(tournament: Tournament) -> Entry:
            tournament.check_organizer(who.player_id)
            return tournament.set_forbidden_pairs(pairs)

        reply = await self._change(request.tournament_id, change)
        return tournament_pb2.SetForbiddenPairsResponse(tournament=reply)

    async def ExportResults(self, request: tournament_pb2.ExportResultsRequest,
                            context: grpc.aio.ServicerContext) -> tournament_pb2.ExportResultsResponse:
        if request.format not in EXPORTS:
            raise invalid("format must be EXPORT_FORMAT_STANDINGS_CSV, EXPORT_FORMAT_GAMES_CSV or "
                          "EXPORT_FORMAT_JSON")
        tournament = await self.store.get(check_tournament_id(request.tournament_id))
        recorded = [result for result, _extra in await self.store.results(tournament.tournament_id)]
        suffix, content_type, write = EXPORTS[request.format]
        return tournament_pb2.ExportResultsResponse(
            content_type=content_type, filename=f"{tournament.tournament_id}-{suffix}",
            content=write(tournament, recorded))

    async def CreateSchedule(self, request: tournament_pb2.CreateScheduleRequest,
                             context: grpc.aio.ServicerContext) -> tournament_pb2.CreateScheduleResponse:
        schedule = schedule_of(request.schedule, self.default_turn, uuid.uuid4().hex, caller().player_id,
                               time.time())
        await self.schedules.add(schedule)
        return tournament_pb2.CreateScheduleResponse(schedule=schedule_proto(schedule))

    async def ListSchedules(self, request: tournament_pb2.ListSchedulesRequest,
                            context: grpc.aio.ServicerContext) -> tournament_pb2.ListSchedulesResponse:
        return tournament_pb2.ListSchedulesResponse(
            schedules=[schedule_proto(schedule) for schedule in await self.schedules.all()])

    async def DeleteSchedule(self, request: tournament_pb2.DeleteScheduleRequest,
                             context: grpc.aio.ServicerContext) -> tournament_pb2.DeleteScheduleResponse:
        try:
            schedule = await self.schedules.get(check_tournament_id(request.schedule_id))
        except IdError as exc:
            raise invalid("schedule_id must be 32 lowercase hex digits") from exc
        if schedule is None:
            raise not_found(f"schedule {request.schedule_id!r}")
        if schedule.organizer_id != caller().player_id:
            raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "only the organizer may do that")
        await self.schedules.delete(schedule.schedule_id)
        return tournament_pb2.DeleteScheduleResponse()

    async def GetStandings(self, request: tournament_pb2.GetStandingsRequest,
                           context: grpc.aio.ServicerContext) -> tournament_pb2.GetStandingsResponse:
        tournament = await self.store.get(check_tournament_id(request.tournament_id))
        recorded = [result for result, _extra in await self.store.results(tournament.tournament_id)]
        return tournament_pb2.GetStandingsResponse(
            standings=convert.standings_proto(tournament, recorded),
            status=convert.status_proto(tournament.status))

    async def WatchTournament(self, request: tournament_pb2.WatchTournamentRequest,  # type: ignore[override]
                              context: grpc.aio.ServicerContext,
                              ) -> AsyncIterator[tournament_pb2.WatchTournamentResponse]:
        tournament_id = check_tournament_id(request.tournament_id)
        if request.after_seq < 0:
            raise invalid("after_seq must be >= 0")
        await self.store.get(tournament_id)  # NOT_FOUND before the stream starts
        watcher = caller().player_id
        # Each entry's response is built once for every watcher of this process (news.Replay),
        # from the history's start, so it tells the tournament as it was at that entry.
        async for replay, indexes in self.watchers.news(tournament_id):
            for index in indexes:
                moment = replay.moments[index]
                if moment.seq <= request.after_seq:
                    continue
                yield replay.response(index, watcher, request.lean)
                if moment.entry["change"] in LAST:
                    return
