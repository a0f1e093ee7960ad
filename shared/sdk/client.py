"""The client: one object per player, holding its token and channels."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import orjson

from shared.api.stammtisch.v1 import (
    accounts_pb2,
    accounts_pb2_grpc,
    arbiter_pb2_grpc,
    clubs_pb2_grpc,
    common_pb2,
    engine_pb2_grpc,
    history_pb2,
    history_pb2_grpc,
    lobby_pb2,
    lobby_pb2_grpc,
    scoring_pb2_grpc,
    tournament_pb2_grpc,
)
from shared.archive.messages import whole_replay
from shared.config import DEFAULT_PORTS, MAX_REPLY_BYTES, SERVICE_NAMES, Settings
from shared.games.catalog import Service, entry
from shared.rpc.actions import action_proto
from shared.rpc.catalog import play_request
from shared.rpc.errors import rule_code_name, rule_violation_of
from shared.rpc.times import unix_seconds

#: The metadata header naming the table of a play call (GetView, Act, Subscribe, Play): a door
#: (services/host/door.py) hashes it to send all of a table's players to one server process.
TABLE_HEADER = "x-stammtisch-table"
#: Errors worth retrying with the same action id (nothing was applied twice).
RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
#: Longest pause between two attempts of one action, however many attempts are allowed.
MAX_BACKOFF_SECONDS = 1.0
#: A restarted server is found again within about a second (grpc's default backs off up to 2 minutes).
#: Reconnect quickly after a server restart; accept answers as large as a replay (over gRPC's 4 MB).
#: Each client its own connections, as separate devices have: grpc otherwise shares one
#: connection among all channels of a process to one address, and every bot of a bench or
#: test would land on the same server process of `stammtisch up --workers N`.
_CHANNEL_OPTIONS = (("grpc.initial_reconnect_backoff_ms", 100), ("grpc.max_reconnect_backoff_ms", 1000),
                    ("grpc.max_receive_message_length", MAX_REPLY_BYTES),
                    ("grpc.use_local_subchannel_pool", 1))


#: The stub of each play service (the catalogue's "engine" or "arbiter") on a channel.
PLAY_STUBS: Mapping[Service, Any] = {"engine": engine_pb2_grpc.EngineServiceStub,
                                     "arbiter": arbiter_pb2_grpc.ArbiterServiceStub}

#: Updates per message a stream asks for while it catches up (one message per commit costs the
#: server a gRPC write each: a resume over thousands of commits took seconds).
CATCH_UP_BATCH = 500


def updates_of(reply: Any) -> Sequence[common_pb2.TableUpdate]:
    """The updates one Subscribe or Play response carries, in order (a Play response wraps a
    batch in TableUpdates, a Subscribe response lists it)."""
    if reply.HasField("update"):
        return [reply.update]
    batch = reply.updates
    return batch.updates if isinstance(batch, common_pb2.TableUpdates) else batch


def open_channel(target: str, tls: grpc.ChannelCredentials | None = None) -> grpc.aio.Channel:
    """A channel to ``host:port``, or to replicas ``ip:port,ip:port`` with round robin; over TLS
    with ``tls`` (the door, or services that answer over TLS themselves).

    Round robin sends each call to a replica that is up, so one replica going
    down costs a retry, not an outage.
    """
    options: tuple[tuple[str, Any], ...] = _CHANNEL_OPTIONS
    if "," in target:
        target, options = f"ipv4:{target}", (*options, ("grpc.lb_policy_name", "round_robin"))
    if tls is None:
        return grpc.aio.insecure_channel(target, options=options)
    return grpc.aio.secure_channel(target, tls, options=options)


@dataclass(frozen=True)
class Endpoints:
    """Where the services listen (each "host:port", or replicas as "ip:port,ip:port"): one
    field per name of shared.config.SERVICE_NAMES, in its order (tests/services/host/test_services.py),
    then how to connect (plaintext, or TLS trusting ``root_certificates``; :meth:`door`)."""

    lobby: str = f"127.0.0.1:{DEFAULT_PORTS['lobby']}"
    engine: str = f"127.0.0.1:{DEFAULT_PORTS['engine']}"
    arbiter: str = f"127.0.0.1:{DEFAULT_PORTS['arbiter']}"
    scoring: str = f"127.0.0.1:{DEFAULT_PORTS['scoring']}"
    tournament: str = f"127.0.0.1:{DEFAULT_PORTS['tournament']}"
    clubs: str = f"127.0.0.1:{DEFAULT_PORTS['clubs']}"
    #: Connect over TLS (the door; or services that answer over TLS themselves).
    tls: bool = field(default=False, kw_only=True)
    #: The CA certificate (PEM) a TLS connection trusts; None: the system's roots.
    root_certificates: bytes | None = field(default=None, kw_only=True)

    @classmethod
    def door(cls, address: str, ca: Path | bytes | None = None) -> Endpoints:
        """Every service through one door, "host:port" (a ``grpcs://`` prefix is allowed), over TLS
        trusting ``ca`` (the CA certificate's file or PEM bytes; None: the system's roots)."""
        address = address.removeprefix("grpcs://")
        roots = ca.read_bytes() if isinstance(ca, Path) else ca
        addresses: dict[str, Any] = dict.fromkeys(SERVICE_NAMES, address)
        return cls(**addresses, tls=True, root_certificates=roots)

    @property
    def through_door(self) -> bool:
        """Every service at one TLS address: a door routes the calls, and a table's calls name
        the table in a header instead of going to its process's own port."""
        return self.tls and len({getattr(self, name) for name in SERVICE_NAMES}) == 1

    def credentials(self) -> grpc.ChannelCredentials | None:
        """What a channel needs for TLS (None: plaintext)."""
        return grpc.ssl_channel_credentials(self.root_certificates) if self.tls else None

    @classmethod
    def on_host(cls, host: str, ports: Mapping[str, int] | None = None) -> Endpoints:
        """The services on a host, at ``ports``, else at the ports STAMMTISCH_*_PORT names (as
        `stammtisch up` reads them), else the default ports."""
        ports = ports or Settings.from_env().ports
        addresses: dict[str, Any] = {name: f"{host}:{ports[name]}" for name in SERVICE_NAMES}
        return cls(**addresses)

    @classmethod
    def of(cls, addresses: Mapping[str, str], **replicas: str) -> Endpoints:
        """The services of a name -> address map (as `stammtisch up` prints it; other names such as
        "metrics" are ignored), with another replica's address for any service in ``replicas``."""
        chosen = {**addresses, **replicas}
        picked: dict[str, Any] = {name: chosen[name] for name in SERVICE_NAMES}
        return cls(**picked)


@dataclass
class Update:
    """One commit of a table as this player sees it."""

    table_id: str
    seq: int
    events: list[dict[str, Any]]
    view: dict[str, Any]
    seat: int
    deadlines: dict[int, float] = field(default_factory=dict)

    @property
    def closed(self) -> str:
        """Why the table was closed before its game ended ("" while it is open): the newest
        update of a closed table carries ``table_closed`` (shared/tables/README.md, "Table lifetime")."""
        return next((str(e.get("reason", "")) for e in self.events if e.get("type") == "table_closed"),
                    "")

    @property
    def finished(self) -> bool:
        """Nothing more happens in this game: it is over, or its table was closed."""
        return bool(self.view.get("over")) or bool(self.closed)

    @classmethod
    def from_proto(cls, update: common_pb2.TableUpdate) -> Update:
        """Decode the JSON parts of a TableUpdate (orjson: a client decodes every update it is
        sent, and the stdlib parser cost a bench client more than its bot's choices)."""
        return cls(update.table_id, update.seq, [orjson.loads(e.data_json) for e in update.events],
                   orjson.loads(update.view_json) if update.view_json else {}, update.seat,
                   {d.seat: unix_seconds(d.expires_at) for d in update.deadlines})


class RefusedAction(Exception):
    """The rules refused an action: ``code`` is the rules code ("MUST_FOLLOW", ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class PlayStream:
    """One table over a bidirectional Play stream: actions go out, answers and updates come in.

    An action costs one message each way: its answer rides with its commit's
    update (``answers_with_updates``), so once :meth:`act` returns, that update
    is already queued. After a drop (UNAVAILABLE) the stream is opened again
    after the last update seen, and the actions still waiting for an answer are
    sent again with their ids: applied once, answered once.
    """

    def __init__(self, client: StammtischClient, table_id: str, after_seq: int, service: Service) -> None:
        self.client = client
        self.table_id = table_id
        self.last_seq = after_seq
        self._service = service
        #: Updates in seq order; None once the stream has ended, with ``_error`` saying why.
        self._updates: asyncio.Queue[Update | None] = asyncio.Queue()
        self._error: Exception | None = None
        self._pending: dict[str, tuple[Any, asyncio.Future[int]]] = {}
        self._call: Any = None
        self._task = asyncio.create_task(self._run(), name=f"play-{table_id}")

    def _request(self, **fields: Any) -> Any:
        return play_request(self._service, "Play", table_id=self.table_id, **fields)

    async def act(self, action: Mapping[str, Any], action_id: str | None = None,
                  round_no: int | None = None) -> int:
        """Send an action and wait for its answer: the seq of its commit (its update comes on
        :meth:`next_update`); raises :class:`RefusedAction` when the rules refuse it."""
        if self._task.done():
            raise self._error or RuntimeError("the Play stream ended")
        action_id = action_id or uuid.uuid4().hex
        request = self._request(action_id=action_id, action=action_proto(action), round=round_no)
        answered: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._pending[action_id] = (request, answered)
        if self._call is not None:
            with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
                await self._call.write(request)  # a dropped call: the reconnect sends it again
        return await answered

    async def next_update(self) -> Update:
        """The next update, in seq order (no gap, no duplicate across drops)."""
        item = await self._updates.get()
        if item is None:
            self._updates.put_nowait(None)  # every later reader sees the end too
            raise self._error or RuntimeError("the Play stream ended")
        return item

    async def newest_update(self) -> Update:
        """The next update, or the newest one already received if several are waiting."""
        update = await self.next_update()
        while not self._updates.empty():
            item = self._updates.get_nowait()
            if item is None:  # the end stays last, for the next read
                self._updates.put_nowait(None)
                break
            update = item
        return update

    async def close(self) -> None:
        """End the stream."""
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        try:
            while True:
                try:
                    await self._follow()
                    raise RuntimeError("the Play stream ended")
                except grpc.aio.AioRpcError as err:
                    if not self.client.transient(err):
                        raise
                    self._call = None
                    self.client.unplace(self.table_id, err)
                    await asyncio.sleep(0.2)
        except Exception as exc:  # noqa: BLE001 - handed to whoever waits on this stream
            for _request, answered in self._pending.values():
                if not answered.done():
                    answered.set_exception(exc)
            self._error = exc
            self._updates.put_nowait(None)

    async def _follow(self) -> None:
        """One call: open it after the last seq seen, resend unanswered actions, then read."""
        call = self.client.table_stub(self.table_id, self._service).Play(
            metadata=self.client.table_metadata(self.table_id))
        if not self.client.endpoints.through_door:
            # Directly, the server sends its headers once it accepts the call. A write racing a
            # refusal (a bad token, the rate limit) would end the call locally as INTERNAL instead.
            await call.initial_metadata()
        # Through a door, write at once: nginx passes the server's headers on only with its
        # first message, which may wait for one of ours (the action of the player whose turn it is).
        try:
            await call.write(self._request(after_seq=self.last_seq, max_batch=CATCH_UP_BATCH,
                                           answers_with_updates=True))
            self._call = call
            for request, _answered in list(self._pending.values()):
                await call.write(request)
        except asyncio.InvalidStateError:
            pass  # the call has ended already: the read below raises its status
        while (reply := await call.read()) is not grpc.aio.EOF:
            if reply.HasField("answer"):
                self._settle(reply.answer)
                continue
            for proto in updates_of(reply):
                update = Update.from_proto(proto)
                if update.seq > self.last_seq:
                    self.last_seq = update.seq
                    self._updates.put_nowait(update)
            for answer in reply.answers:  # after the updates they ride on: those are queued
                self._settle(answer)

    def _settle(self, answer: common_pb2.PlayAnswer) -> None:
        _request, answered = self._pending.pop(answer.action_id, (None, None))
        if answered is None or answered.done():  # an answer sent again after a resend
            return
        if answer.HasField("refused"):
            answered.set_exception(RefusedAction(rule_code_name(answer.refused), answer.refused.message))
        else:
            answered.set_result(answer.seq)


class StammtischClient:
    """A logged-in (or about to log in) player's connection to every service."""

    #: What :meth:`play` opens (a subclass may time or log its actions).
    play_stream_class = PlayStream

    def __init__(self, endpoints: Endpoints | None = None) -> None:
        self.endpoints = endpoints or Endpoints()
        tls = self.endpoints.credentials()
        by_address: dict[str, grpc.aio.Channel] = {}  # the door: one channel for every stub
        for address in (getattr(self.endpoints, name) for name in SERVICE_NAMES):
            if address not in by_address:
                by_address[address] = open_channel(address, tls)
        self._channels = {name: by_address[getattr(self.endpoints, name)] for name in SERVICE_NAMES}
        self.lobby = lobby_pb2_grpc.LobbyServiceStub(self._channels["lobby"])
        self.engine = engine_pb2_grpc.EngineServiceStub(self._channels["engine"])
        self.arbiter = arbiter_pb2_grpc.ArbiterServiceStub(self._channels["arbiter"])
        self.scoring = scoring_pb2_grpc.ScoringServiceStub(self._channels["scoring"])
        self.tournaments = tournament_pb2_grpc.TournamentServiceStub(self._channels["tournament"])
        self.accounts = accounts_pb2_grpc.AccountServiceStub(self._channels["lobby"])
        self.history = history_pb2_grpc.HistoryServiceStub(self._channels["lobby"])
        self.clubs = clubs_pb2_grpc.ClubsServiceStub(self._channels["clubs"])
        self.token = ""
        self.refresh_token = ""
        self.player_id = ""
        self.name = ""
        self._games: dict[str, str] = {}
        #: Table id -> the address of the server process that holds it (Table.play_port).
        self._placed: dict[str, str] = {}
        #: Address -> channel to one server process, and its stub of each play service.
        self._direct: dict[str, tuple[grpc.aio.Channel, dict[Service, Any]]] = {}
        self._play_stubs: dict[Service, Any] = {"engine": self.engine, "arbiter": self.arbiter}
        self._refresher: asyncio.Task[None] | None = None

    async def close(self) -> None:
        """Stop renewing the token; close every channel."""
        if self._refresher is not None:
            self._refresher.cancel()
            await asyncio.gather(self._refresher, return_exceptions=True)
        channels = {*self._channels.values(), *(channel for channel, _ in self._direct.values())}
        await asyncio.gather(*(channel.close() for channel in channels))

    async def __aenter__(self) -> StammtischClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    @property
    def auth(self) -> tuple[tuple[str, str], ...]:
        """Call metadata carrying the token (none before login: the call goes out anonymous)."""
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()

    def transient(self, err: grpc.aio.AioRpcError) -> bool:
        """Worth a retry with the same action id, or a resume after the last update: UNAVAILABLE,
        DEADLINE_EXCEEDED and, through a door, a call it reset because its server process died
        mid-call (nginx can only reset the stream: grpc reports INTERNAL "RST_STREAM")."""
        return err.code() in RETRYABLE or (
            self.endpoints.through_door and err.code() == grpc.StatusCode.INTERNAL
            and "RST_STREAM" in (err.details() or ""))

    def table_metadata(self, table_id: str) -> tuple[tuple[str, str], ...]:
        """Metadata of a play call on a table: the token and the table's id (TABLE_HEADER), by
        which a door sends every player of the table to the same server process."""
        return (*self.auth, (TABLE_HEADER, table_id))

    # -- lobby -------------------------------------------------------------------------

    async def login(self, name: str) -> str:
        """Log in as a guest; returns the player id."""
        reply = await self.lobby.Login(lobby_pb2.LoginRequest(name=name))
        self.token, self.player_id, self.name = reply.token, reply.player_id, name
        return self.player_id

    async def login_device(self, device_id: str, device_secret: str,
                           name: str = "") -> accounts_pb2.LoginDeviceResponse:
        """Log in as this device's lasting player (made on first use)."""
        reply = await self.accounts.LoginDevice(accounts_pb2.LoginDeviceRequest(
            device_id=device_id, device_secret=device_secret, display_name=name))
        self.token, self.player_id, self.name = reply.token, reply.player_id, reply.display_name
        self.refresh_token = reply.refresh_token
        if self._refresher is None:
            self._refresher = asyncio.create_task(self._keep_fresh(reply.expires_at.seconds))
        return reply

    async def _keep_fresh(self, expires_at: float) -> None:
        """Renew the short-lived access token of a device login before it expires (a game can
        outlast it); open streams keep going, later calls carry the new token."""
        while True:
            await asyncio.sleep(max(1.0, (expires_at - time.time()) * 0.8))
            try:
                expires_at = (await self.refresh()).expires_at.seconds
            except grpc.aio.AioRpcError as err:
                if err.code() == grpc.StatusCode.UNAUTHENTICATED:
                    return  # revoked: the next call says so
                expires_at = time.time() + 10  # the server is away: try again soon

    async def refresh(self) -> accounts_pb2.RefreshTokenResponse:
        """Renew the access token with the refresh token (which is used up and replaced)."""
        reply = await self.accounts.RefreshToken(
            accounts_pb2.RefreshTokenRequest(refresh_token=self.refresh_token))
        self.token, self.refresh_token = reply.token, reply.refresh_token
        return reply

    async def my_games(self, page_size: int = 0, page_token: str = "") -> history_pb2.ListMyGamesResponse:
        """One page of this player's finished games, newest first."""
        return await self.history.ListMyGames(history_pb2.ListMyGamesRequest(
            page_size=page_size, page_token=page_token), metadata=self.auth)

    async def replay(self, table_id: str, game_no: int = 0) -> history_pb2.GetReplayResponse:
        """A finished game with every card and its seed (0: the table's newest finished game),
        put together from its pages (shared/archive/messages.py)."""
        return await whole_replay(lambda request: self.history.GetReplay(request, metadata=self.auth),
                                  table_id, game_no)

    async def games(self) -> list[lobby_pb2.GameInfo]:
        """The server's catalogue: every game it hosts (no login needed)."""
        return list((await self.lobby.ListGames(lobby_pb2.ListGamesRequest())).games)

    async def create_table(self, game: str, seats: int, join: bool = True,
                           options: Mapping[str, Any] | None = None,
                           turn_seconds: int | None = None) -> lobby_pb2.Table:
        """A new table of ``game`` (its catalogue name) with the game's ``options`` by name;
        ``turn_seconds``: the clock of each decision (None: the server's default, 0: none)."""
        table_options = common_pb2.TableOptions(turn_seconds=turn_seconds)
        table_options.game_options.update(options or {})
        reply = await self.lobby.CreateTable(lobby_pb2.CreateTableRequest(
            game=game, seats=seats, options=table_options, join=join), metadata=self.auth)
        self.remember_table(reply.table)
        return reply.table

    async def join(self, table_id: str, seat: int | None = None,
                   spectator: bool = False) -> lobby_pb2.JoinTableResponse:
        """Take a seat (or watch)."""
        request = lobby_pb2.JoinTableRequest(table_id=table_id, spectator=spectator)
        if seat is not None:
            request.seat = seat
        reply = await self.lobby.JoinTable(request, metadata=self.auth)
        self.remember_table(reply.table)
        return reply

    async def add_bot(self, table_id: str, level: str = "") -> lobby_pb2.Table:
        """Seat a server bot in the first open seat ("" : the lobby's default level)."""
        reply = await self.lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table_id, level=level),
                                        metadata=self.auth)
        return reply.table

    async def ready(self, table_id: str, ready: bool = True) -> lobby_pb2.Table:
        """Say ready (the game starts once every seat is)."""
        reply = await self.lobby.SetReady(lobby_pb2.SetReadyRequest(table_id=table_id, ready=ready),
                                          metadata=self.auth)
        return reply.table

    async def leave(self, table_id: str) -> lobby_pb2.Table:
        """Leave the table (mid-game: a bot or the rules take over)."""
        reply = await self.lobby.LeaveTable(lobby_pb2.LeaveTableRequest(table_id=table_id),
                                            metadata=self.auth)
        return reply.table

    async def get_table(self, table_id: str) -> lobby_pb2.Table:
        """The table as the lobby has it now."""
        reply = await self.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id),
                                          metadata=self.auth)
        self.remember_table(reply.table)
        return reply.table

    async def list_tables(self, game: str = "", open_only: bool = True,
                          limit: int = 50) -> list[lobby_pb2.Table]:
        """Tables, newest first, of one game ("": of every game)."""
        reply = await self.lobby.ListTables(lobby_pb2.ListTablesRequest(
            game=game, open_only=open_only, limit=limit), metadata=self.auth)
        return list(reply.tables)

    async def quick_match(self, game: str, seats: int) -> tuple[lobby_pb2.Table, int]:
        """Queue for a game of ``seats``; returns the table and seat once matched."""
        async with contextlib.aclosing(self.match_queue(game, seats)) as answers:
            async for reply in answers:
                if reply.HasField("table"):
                    return reply.table, reply.seat
        raise RuntimeError("quick match ended without a table")

    async def match_queue(self, game: str,
                          seats: int) -> AsyncGenerator[lobby_pb2.QuickMatchResponse, None]:
        """Every answer of a quick match: the place in the queue as it changes, then the table.

        Closing the iterator (``aclose()``, ``contextlib.aclosing``) leaves the queue at once.
        """
        call = self.lobby.QuickMatch(lobby_pb2.QuickMatchRequest(game=game, seats=seats),
                                     metadata=self.auth)
        try:
            async for reply in call:
                if reply.HasField("table"):
                    self.remember_table(reply.table)
                yield reply
        finally:
            call.cancel()

    async def watch(self, table_id: str) -> AsyncGenerator[lobby_pb2.WatchTableResponse, None]:
        """The table's seating, readiness, chat and game start/finish, live (until closed)."""
        call = self.lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=table_id), metadata=self.auth)
        try:
            async for reply in call:
                yield reply
        finally:
            call.cancel()

    async def chat(self, table_id: str, text: str) -> None:
        """Say something at the table."""
        await self.lobby.SendChat(lobby_pb2.SendChatRequest(table_id=table_id, text=text),
                                  metadata=self.auth)

    # -- play --------------------------------------------------------------------------

    def remember_table(self, table: lobby_pb2.Table) -> None:
        """Remember a table's game and where it is played best: with ``play_port`` set, the
        server process that holds the table, on the host of the game's service (not for a
        service given as several replicas: they are other hosts; not through a door, which
        picks the process by the table header)."""
        self._games[table.table_id] = table.game
        endpoint = getattr(self.endpoints, entry(self._games[table.table_id]).service)
        if table.play_port and "," not in endpoint and not self.endpoints.through_door:
            self._placed[table.table_id] = f"{endpoint.rpartition(':')[0]}:{table.play_port}"
        else:
            self._placed.pop(table.table_id, None)

    def table_stub(self, table_id: str, service: Service) -> Any:
        """The stub of ``service`` (the game's) that plays the table: of the process that holds
        it, if the lobby said which, else of the service's own address."""
        address = self._placed.get(table_id)
        if address is None:
            return self._play_stubs[service]
        if address not in self._direct:
            channel = open_channel(address, self.endpoints.credentials())
            self._direct[address] = (channel, {name: stub(channel) for name, stub in PLAY_STUBS.items()})
        return self._direct[address][1][service]

    def unplace(self, table_id: str, err: grpc.aio.AioRpcError) -> bool:
        """After ``err``, play the table through the game's service again if the process that
        holds it did not answer (it may be restarting; any process serves every table).
        True when the table had such a place."""
        return err.code() == grpc.StatusCode.UNAVAILABLE and self._placed.pop(table_id, None) is not None

    async def _game_of(self, table_id: str) -> str:
        if table_id not in self._games:
            await self.get_table(table_id)
        return self._games[table_id]

    async def _service_of(self, table_id: str) -> Service:
        """The service that plays the table's game (the catalogue's "engine" or "arbiter")."""
        return entry(await self._game_of(table_id)).service

    async def act(self, table_id: str, action: Mapping[str, Any], action_id: str | None = None,
                  attempts: int = 5, round_no: int | None = None) -> Update:
        """Apply an action; retried with the same id on transient failures (applied once).

        ``round_no``: the round the action is meant for (its view's ``round``);
        refused with STALE once the table has moved on to another round.
        """
        action_id = action_id or uuid.uuid4().hex
        service = await self._service_of(table_id)
        request = play_request(service, "Act", table_id=table_id, action_id=action_id,
                               action=action_proto(action), round=round_no)
        for attempt in range(attempts):
            try:
                reply = await self.table_stub(table_id, service).Act(request,
                                                                     metadata=self.table_metadata(table_id))
                return Update.from_proto(reply.update)
            except grpc.aio.AioRpcError as err:
                violation = rule_violation_of(err)
                if violation is not None:
                    raise RefusedAction(rule_code_name(violation), violation.message) from err
                self.unplace(table_id, err)
                if not self.transient(err) or attempt == attempts - 1:
                    raise
                await asyncio.sleep(min(MAX_BACKOFF_SECONDS, 0.05 * 2 ** attempt))
        raise AssertionError("unreachable")

    @contextlib.asynccontextmanager
    async def play(self, table_id: str, after_seq: int = 0) -> AsyncIterator[PlayStream]:
        """A Play stream on the table for the block: updates after ``after_seq`` and actions."""
        stream = self.play_stream_class(self, table_id, after_seq, await self._service_of(table_id))
        try:
            yield stream
        finally:
            await stream.close()

    async def view(self, table_id: str) -> Update:
        """The newest state as this player sees it."""
        service = await self._service_of(table_id)
        request = play_request(service, "GetView", table_id=table_id)
        try:
            reply = await self.table_stub(table_id, service).GetView(request,
                                                                     metadata=self.table_metadata(table_id))
        except grpc.aio.AioRpcError as err:
            if not self.unplace(table_id, err):
                raise
            reply = await self.table_stub(table_id, service).GetView(request,
                                                                     metadata=self.table_metadata(table_id))
        return Update.from_proto(reply.update)

    async def wait_for_game(self, table_id: str, poll_seconds: float = 0.3) -> Update:
        """The first view once the table's game exists (the lobby starts it when all are ready)."""
        while True:
            try:
                return await self.view(table_id)
            except grpc.aio.AioRpcError as err:
                if err.code() != grpc.StatusCode.NOT_FOUND:
                    raise
                await asyncio.sleep(poll_seconds)

    async def updates(self, table_id: str, after_seq: int = 0,
                      reconnect: bool = True) -> AsyncIterator[Update]:
        """Every update after ``after_seq``, resuming from the last one seen after a drop."""
        last = after_seq
        service = await self._service_of(table_id)
        while True:
            stream = self.table_stub(table_id, service).Subscribe(play_request(
                service, "Subscribe", table_id=table_id, after_seq=last, max_batch=CATCH_UP_BATCH),
                metadata=self.table_metadata(table_id))
            try:
                async for reply in stream:
                    for proto in updates_of(reply):
                        update = Update.from_proto(proto)
                        last = update.seq
                        yield update
                return
            except grpc.aio.AioRpcError as err:
                if not reconnect or not self.transient(err):
                    raise
                self.unplace(table_id, err)
                await asyncio.sleep(0.2)
