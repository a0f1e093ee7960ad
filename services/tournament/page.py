"""The tournament page: a public web page per tournament, served by the tournament service.

Routes (aiohttp, on ``STAMMTISCH_TOURNAMENT_PAGE_PORT``):

* ``GET /tournaments``: running, upcoming, scheduled and finished tournaments (HTML);
* ``GET /tournaments/{id}``: the page (status, clock, rounds and tables, live standings,
  results and export links); it renders ``/state`` and follows ``/events``;
* ``GET /tournaments/{id}/state``: the tournament and its standings now (JSON);
* ``GET /tournaments/{id}/events``: the same as server-sent events, one per history batch;
* ``GET /tournaments/{id}/tables/{table_id}``: a table read-only (seats, games, results);
* ``GET /tournaments/{id}/export/{standings.csv,games.csv,results.json}``: the results;
* ``GET /api/me`` and ``POST /tournaments/{id}/control/{action}``: with ``Authorization:
  Bearer <token>`` (the gRPC API's tokens), the organizer's controls, run through the
  servicer's own code (same checks, same refusals as gRPC).

Watching needs no login. Tokens travel only in the Authorization header (the page keeps one
in the tab's sessionStorage; the CLI hands it over in the URL's #fragment, which browsers
never send), so no token reaches a URL, an access log or a referrer.
"""

from __future__ import annotations

import datetime as dt
import html
import json
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

import grpc
from aiohttp import web

from services.tournament.core.calendar import Recurrence
from services.tournament.feed import PageFeeds, snapshot
from services.tournament.model import Status, Tournament
from services.tournament.schedules import Schedule
from services.tournament.servicer import EXPORTS, TournamentServicer
from services.tournament.store import TournamentStore
from shared.api.stammtisch.v1 import tournament_pb2
from shared.errors import Refusal
from shared.ids import check_tournament_id
from shared.obs.logs import get_logger
from shared.rpc.auth import TokenSigner, caller, set_identity
from shared.rpc.errors import ServiceError, clipped, status_of_refusal

log = get_logger("tournament.page")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

WEEKDAYS = ("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays")
#: Tournaments the list page shows at most.
LISTED = 100
#: The files under /export/ and the ExportResults format of each.
EXPORT_FILES = {"standings.csv": tournament_pb2.EXPORT_FORMAT_STANDINGS_CSV,
                "games.csv": tournament_pb2.EXPORT_FORMAT_GAMES_CSV,
                "results.json": tournament_pb2.EXPORT_FORMAT_JSON}
#: gRPC refusals as HTTP statuses.
HTTP_STATUS = {grpc.StatusCode.INVALID_ARGUMENT: 400, grpc.StatusCode.UNAUTHENTICATED: 401,
               grpc.StatusCode.PERMISSION_DENIED: 403, grpc.StatusCode.NOT_FOUND: 404,
               grpc.StatusCode.FAILED_PRECONDITION: 409, grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
               grpc.StatusCode.UNAVAILABLE: 503}
#: The page's organizer controls (besides "remove"): the servicer's method and its request.
CONTROLS: dict[str, tuple[str, Any]] = {
    "start": ("StartTournament", tournament_pb2.StartTournamentRequest),
    "pause": ("PauseTournament", tournament_pb2.PauseTournamentRequest),
    "resume": ("ResumeTournament", tournament_pb2.ResumeTournamentRequest),
    "cancel": ("CancelTournament", tournament_pb2.CancelTournamentRequest),
    "next_round": ("StartNextRound", tournament_pb2.StartNextRoundRequest),
}
#: Seconds between comment lines on an idle event stream (proxies drop silent connections).
KEEPALIVE_SECONDS = 15.0
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; base-uri 'none'; "
                               "frame-ancestors 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
}


def _asset(name: str) -> str:
    return (resources.files("services.tournament") / "web" / name).read_text(encoding="utf-8")


class TournamentPage:
    """The aiohttp application of the page; :meth:`start` binds it, :meth:`stop` closes it."""

    def __init__(self, store: TournamentStore, servicer: TournamentServicer, feeds: PageFeeds,
                 signer: TokenSigner) -> None:
        self.store = store
        self.servicer = servicer
        self.feeds = feeds
        self.signer = signer
        self.port = 0
        self._runner: web.AppRunner | None = None
        self.app = web.Application(middlewares=[self._refusals])
        self.app.on_response_prepare.append(self._headers)
        self.app.add_routes([
            web.get("/", self.home), web.get("/tournaments", self.listing),
            web.get("/static/{name}", self.static), web.get("/api/me", self.me),
            web.get("/tournaments/{tid}", self.page), web.get("/tournaments/{tid}/state", self.state),
            web.get("/tournaments/{tid}/events", self.events),
            web.get("/tournaments/{tid}/tables/{table_id}", self.table),
            web.get("/tournaments/{tid}/export/{file}", self.export),
            web.post("/tournaments/{tid}/control/{action}", self.control)])

    async def start(self, host: str, port: int, reuse_port: bool = False) -> int:
        """Serve on host:port (0: a free port); returns the port."""
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, reuse_port=reuse_port or None)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else port
        return self.port

    async def stop(self) -> None:
        """Close the streams and the server."""
        await self.feeds.close()
        if self._runner is not None:
            await self._runner.cleanup()

    # -- plumbing -----------------------------------------------------------------------------

    @web.middleware
    async def _refusals(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """A refusal becomes its HTTP status with a JSON {"code", "message"}, never a 500."""
        try:
            return await handler(request)
        except Refusal as err:  # ServiceError and the neutral refusals (a malformed id...)
            code = status_of_refusal(err)
            return web.json_response({"code": code.name, "message": clipped(str(err))},
                                     status=HTTP_STATUS.get(code, 400))

    async def _headers(self, request: web.Request, response: web.StreamResponse) -> None:
        response.headers.update(_SECURITY_HEADERS)

    async def _tournament(self, request: web.Request) -> Tournament:
        return await self.store.get(check_tournament_id(request.match_info["tid"]))

    # -- pages -----------------------------------------------------------------------------------

    async def home(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/tournaments")

    async def static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        types = {"page.js": "text/javascript", "page.css": "text/css"}
        if name not in types:
            raise web.HTTPNotFound()
        return web.Response(text=_asset(name), content_type=types[name], charset="utf-8",
                            headers={"Cache-Control": "no-cache"})

    async def listing(self, request: web.Request) -> web.StreamResponse:
        found = await self.store.newest(LISTED)
        running = (Status.RUNNING, Status.PAUSED, Status.CHECK_IN)
        groups = {"Running": [t for t in found if t.status in running],
                  "Upcoming": [t for t in found if t.status == Status.REGISTRATION],
                  "Finished": [t for t in found if t.status in (Status.FINISHED, Status.CANCELLED)]}
        body = []
        for title, items in groups.items():
            rows = "".join(_list_row(t) for t in items) or '<li class="none">none</li>'
            body.append(f'<section><h2>{title}</h2><ul class="list">{rows}</ul></section>')
        planned = [s for s in await self.servicer.schedules.all() if s.next_start is not None]
        rows = "".join(_schedule_row(s) for s in planned) or '<li class="none">none</li>'
        body.insert(2, f'<section><h2>Scheduled</h2><ul class="list" id="scheduled">{rows}</ul></section>')
        return _html("Tournaments", f'<header><h1>Tournaments</h1></header>{"".join(body)}')

    async def page(self, request: web.Request) -> web.StreamResponse:
        tournament = await self._tournament(request)
        return _html(tournament.settings.name, _asset("page.html"), tournament.tournament_id)

    async def table(self, request: web.Request) -> web.StreamResponse:
        tournament = await self._tournament(request)
        table_id = request.match_info["table_id"]
        return _html(f"{tournament.settings.name}: {table_id}", _asset("table.html"),
                     tournament.tournament_id, table_id)

    async def state(self, request: web.Request) -> web.StreamResponse:
        tournament = await self._tournament(request)
        return web.json_response(await snapshot(self.store, tournament.tournament_id),
                                 headers={"Cache-Control": "no-store"})

    async def events(self, request: web.Request) -> web.StreamResponse:
        tournament = await self._tournament(request)
        response = web.StreamResponse(headers={
            "Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"})
        await response.prepare(request)
        await response.write(b"retry: 2000\n\n")
        events = self.feeds.events(tournament.tournament_id, KEEPALIVE_SECONDS)
        try:
            async for event in events:
                await response.write(event if event is not None else b": keepalive\n\n")
        except ConnectionResetError:
            pass  # the viewer left
        finally:
            await events.aclose()
        return response

    async def export(self, request: web.Request) -> web.StreamResponse:
        tournament = await self._tournament(request)
        fmt = EXPORT_FILES.get(request.match_info["file"])
        if fmt is None:
            raise web.HTTPNotFound()
        recorded = [result for result, _extra in await self.store.results(tournament.tournament_id)]
        suffix, content_type, write = EXPORTS[fmt]
        return web.Response(body=write(tournament, recorded), headers={
            "Content-Type": content_type,
            "Content-Disposition": f'attachment; filename="{tournament.tournament_id}-{suffix}"'})

    # -- the organizer -----------------------------------------------------------------------------

    def _login(self, request: web.Request) -> None:
        """Bind the bearer token's player as the caller of this request (its own task)."""
        header = request.headers.get("Authorization", "")
        if not header.startswith("Bearer "):
            raise ServiceError(grpc.StatusCode.UNAUTHENTICATED, "missing token: log in first")
        set_identity(self.signer.verify(header.removeprefix("Bearer ").strip()))

    async def me(self, request: web.Request) -> web.StreamResponse:
        self._login(request)
        who = caller()
        return web.json_response({"player_id": who.player_id, "name": who.name})

    async def control(self, request: web.Request) -> web.StreamResponse:
        self._login(request)
        tid = request.match_info["tid"]
        action = request.match_info["action"]
        if action == "remove":
            try:
                body = await request.json() if request.can_read_body else {}
            except ValueError:  # not JSON: no player named (INVALID_ARGUMENT below)
                body = {}
            player = str(body.get("player_id", "")) if isinstance(body, dict) else ""
            await self.servicer.RemovePlayer(
                tournament_pb2.RemovePlayerRequest(tournament_id=tid, player_id=player), None)  # type: ignore[arg-type]
        elif action in CONTROLS:
            method, message = CONTROLS[action]
            await getattr(self.servicer, method)(message(tournament_id=tid), None)
        else:
            raise web.HTTPNotFound()
        log.info("page_control", tournament_id=tid, action=action)
        return web.json_response(await snapshot(self.store, check_tournament_id(tid)))


def _list_row(tournament: Tournament) -> str:
    s = tournament.settings
    players = sum(1 for p in tournament.players if not p.bot)
    link = f"/tournaments/{html.escape(tournament.tournament_id)}"
    meta = f"{s.game} · {s.kind} · {players} players · {tournament.status}"
    return (f'<li><a href="{link}">{html.escape(s.name)}</a> '
            f'<span class="meta">{html.escape(meta)}</span></li>')


def _schedule_row(schedule: Schedule) -> str:
    """One schedule of the list page: its name, rule and next start (escaped)."""
    name = schedule.template().name
    weekly = WEEKDAYS[schedule.weekday - 1] if schedule.weekday else ""
    when = {Recurrence.ONCE: schedule.date, Recurrence.DAILY: "daily",
            Recurrence.WEEKLY: weekly}[schedule.recurrence]
    meta = f"{when} at {schedule.time_of_day} ({schedule.time_zone}) · next {_utc(schedule.next_start or 0)}"
    return f'<li>{html.escape(name)} <span class="meta">{html.escape(meta)}</span></li>'


def _utc(stamp: float) -> str:
    return dt.datetime.fromtimestamp(stamp, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _html(title: str, body: str, tournament_id: str = "", table_id: str = "") -> web.Response:
    """A page: escaped title, the body, the tournament (and table) the script shows."""
    data = html.escape(json.dumps({"tournament_id": tournament_id, "table_id": table_id}), quote=True)
    return web.Response(text=f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} · Stammtisch</title>
<link rel="stylesheet" href="/static/page.css"></head>
<body data-page="{data}"><main>{body}</main>
{'<script src="/static/page.js"></script>' if tournament_id else ''}
</body></html>""", content_type="text/html", charset="utf-8")
