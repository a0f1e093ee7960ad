"""Clients and helpers shared by the lobby integration tests (no tests of its own)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc

from shared.api.stammtisch.v1 import common_pb2, engine_pb2, engine_pb2_grpc, lobby_pb2, lobby_pb2_grpc

T = TypeVar("T")


@dataclass
class Player:
    """A logged-in client with stubs for the lobby and the engine."""

    name: str
    player_id: str
    lobby: lobby_pb2_grpc.LobbyServiceStub
    engine: engine_pb2_grpc.EngineServiceStub
    auth: tuple[tuple[str, str], ...]

    async def create(self, game: int, seats: int, join: bool = True,
                     **options: int) -> lobby_pb2.Table:
        reply = await self.lobby.CreateTable(lobby_pb2.CreateTableRequest(
            game=game, seats=seats, options=common_pb2.TableOptions(**options), join=join),
            metadata=self.auth)
        return reply.table

    async def join(self, table_id: str, seat: int | None = None,
                   spectator: bool = False) -> lobby_pb2.JoinTableResponse:
        request = lobby_pb2.JoinTableRequest(table_id=table_id, spectator=spectator)
        if seat is not None:
            request.seat = seat
        return await self.lobby.JoinTable(request, metadata=self.auth)

    async def ready(self, table_id: str, ready: bool = True) -> lobby_pb2.Table:
        reply = await self.lobby.SetReady(lobby_pb2.SetReadyRequest(table_id=table_id, ready=ready),
                                          metadata=self.auth)
        return reply.table

    async def add_bot(self, table_id: str, level: str = "") -> lobby_pb2.Table:
        reply = await self.lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table_id, level=level),
                                        metadata=self.auth)
        return reply.table

    async def leave(self, table_id: str) -> lobby_pb2.Table:
        reply = await self.lobby.LeaveTable(lobby_pb2.LeaveTableRequest(table_id=table_id),
                                            metadata=self.auth)
        return reply.table

    async def table(self, table_id: str) -> lobby_pb2.Table:
        reply = await self.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id),
                                          metadata=self.auth)
        return reply.table

    async def chat(self, table_id: str, text: str) -> None:
        await self.lobby.SendChat(lobby_pb2.SendChatRequest(table_id=table_id, text=text),
                                  metadata=self.auth)

    async def view(self, table_id: str) -> tuple[common_pb2.TableUpdate, dict[str, Any]]:
        reply = await self.engine.GetView(engine_pb2.GetViewRequest(table_id=table_id),
                                          metadata=self.auth)
        return reply.update, json.loads(reply.update.view_json)

    async def act(self, table_id: str, action: dict[str, Any]) -> common_pb2.TableUpdate:
        reply = await self.engine.Act(engine_pb2.ActRequest(
            table_id=table_id, action_id=uuid.uuid4().hex, action=common_pb2.Action(**action)),
            metadata=self.auth)
        return reply.update


@asynccontextmanager
async def players(stack: dict[str, str], *names: str,
                  lobby_address: str | None = None) -> AsyncIterator[list[Player]]:
    """Logged-in players on their own channels (lobby at ``lobby_address`` if given)."""
    async with AsyncExitStack() as exits:
        lobby_channel = await exits.enter_async_context(
            grpc.aio.insecure_channel(lobby_address or stack["lobby"]))
        engine_channel = await exits.enter_async_context(grpc.aio.insecure_channel(stack["engine"]))
        lobby = lobby_pb2_grpc.LobbyServiceStub(lobby_channel)
        engine = engine_pb2_grpc.EngineServiceStub(engine_channel)
        logged_in = []
        for name in names:
            reply = await lobby.Login(lobby_pb2.LoginRequest(name=name))
            logged_in.append(Player(name, reply.player_id, lobby, engine,
                                    (("authorization", f"Bearer {reply.token}"),)))
        yield logged_in


async def eventually(probe: Callable[[], Awaitable[T | None]], timeout: float = 15.0,
                     what: str = "condition") -> T:
    """Poll ``probe`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        result = await probe()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def table_status(player: Player, table_id: str, status: int) -> lobby_pb2.Table:
    """Wait until the table has ``status``."""
    async def probe() -> lobby_pb2.Table | None:
        table = await player.table(table_id)
        return table if table.status == status else None
    return await eventually(probe, what=f"table status {lobby_pb2.TableStatus.Name(status)}")


async def play_turns(people: list[Player], table_id: str,
                     until: Callable[[dict[str, Any]], bool], timeout: float = 20.0) -> dict[str, Any]:
    """The people play their first legal action whenever they are to act (bots play by the
    clock) until ``until(view)`` holds for one of them; returns that view."""
    async def step() -> dict[str, Any] | None:
        for person in people:
            update, view = await person.view(table_id)
            if until(view):
                return view
            if update.seat in view["to_act"] and view["legal"]:
                try:
                    await person.act(table_id, view["legal"][0])
                except grpc.aio.AioRpcError as err:  # a bot or clock moved first
                    if err.code() != grpc.StatusCode.FAILED_PRECONDITION:
                        raise
        return None
    return await eventually(step, timeout, what="the game to reach the expected state")
