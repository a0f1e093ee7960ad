"""Through a door the SDK opens a Play call again when its headers do not come (nginx held a few
new Play calls for good with several server processes behind it): the stream goes on from the
last seq instead of waiting for the table's turn clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from shared.api.stammtisch.v1 import common_pb2, engine_pb2, engine_pb2_grpc
from shared.rpc.tls import development_certificates, server_credentials
from shared.sdk.client import TABLE_HEADER, Endpoints, StammtischClient

pytestmark = pytest.mark.integration


class FirstCallHangs(engine_pb2_grpc.EngineServiceServicer):
    """Sends no headers on the first Play call (as the held call); answers the next one."""

    def __init__(self) -> None:
        self.calls: list[dict[str, str]] = []

    async def Play(self, request_iterator: AsyncIterator[Any],
                   context: grpc.aio.ServicerContext) -> AsyncIterator[engine_pb2.PlayResponse]:
        self.calls.append(dict(context.invocation_metadata() or ()))
        if len(self.calls) == 1:
            await asyncio.Event().wait()  # until the client cancels
        await context.send_initial_metadata(())
        opening = await anext(aiter(request_iterator))
        yield engine_pb2.PlayResponse(update=common_pb2.TableUpdate(
            table_id=opening.table_id, seq=opening.after_seq + 1, view_json="{}"))
        await asyncio.Event().wait()


async def test_a_play_call_without_headers_is_opened_again(tmp_path: Path) -> None:
    files = development_certificates(tmp_path, ["127.0.0.1"])
    servicer = FirstCallHangs()
    server = grpc.aio.server()
    engine_pb2_grpc.add_EngineServiceServicer_to_server(servicer, server)
    port = server.add_secure_port("127.0.0.1:0", server_credentials(files.cert, files.key))
    await server.start()
    try:
        async with StammtischClient(Endpoints.door(f"127.0.0.1:{port}", files.ca)) as client:
            client._games["t1"] = "willi"  # its game, as the lobby would have said
            async with client.play("t1") as stream:
                update = await asyncio.wait_for(stream.next_update(), 15)
        assert update.seq == 1 and len(servicer.calls) == 2
        assert all(call[TABLE_HEADER] == "t1" for call in servicer.calls)
    finally:
        await server.stop(0)
