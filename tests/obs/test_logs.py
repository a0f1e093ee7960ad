"""Every log line goes to stderr in the configured format, and no child's pipe can fill up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from services.host.launch import start_stack
from shared.api.stammtisch.v1 import lobby_pb2, lobby_pb2_grpc

pytestmark = pytest.mark.integration

#: Loggers bound at import (the interceptor's level table) and libraries' stdlib loggers.
_EARLY_AND_FOREIGN = """
import logging, warnings
from shared.rpc import interceptors
from shared.obs.logs import configure_logging
configure_logging("info", "json")
interceptors.log.warning("early_warning")
interceptors._LEVELS["INTERNAL"]("early_error")
logging.getLogger("nats.aio.client").error("nats %s", "failed")
logging.getLogger("asyncio").warning("loop slow")
warnings.warn("a warning")
"""


def test_early_bound_and_library_loggers_write_json_to_stderr_only() -> None:
    done = subprocess.run([sys.executable, "-c", _EARLY_AND_FOREIGN], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout == ""
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    assert [line["event"] for line in lines][:4] == ["early_warning", "early_error", "nats failed",
                                                     "loop slow"]
    assert lines[4]["logger"] == "py.warnings" and "a warning" in lines[4]["event"]
    assert [line["level"] for line in lines] == ["warning", "error", "error", "warning", "warning"]
    assert all("timestamp" in line for line in lines)


_CLIENT_GONE = """
import logging
from shared.obs.logs import configure_logging
configure_logging("info", "json")
try:
    raise RuntimeError("Failed execute_batch")
except RuntimeError:
    logging.getLogger("grpc._cython.cygrpc").exception(
        "ExecuteBatchError raised in core by servicer method [%s]", "/grpc.health.v1.Health/Check")
logging.getLogger("grpc._cython.cygrpc").error("something else broke")
"""


def test_a_reply_to_a_client_that_left_is_one_info_line_without_traceback() -> None:
    done = subprocess.run([sys.executable, "-c", _CLIENT_GONE], capture_output=True, text=True,
                          timeout=60, check=True)
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    assert [(line["event"], line["level"]) for line in lines] == [
        ("client_gone_before_reply", "info"), ("something else broke", "error")]
    assert "exception" not in lines[0]


async def test_a_stack_whose_stdout_nobody_reads_keeps_answering(infra: tuple[str, str],
                                                                 tmp_path: Path) -> None:
    redis_url, nats_url = infra
    stack = start_stack({"REDIS_URL": redis_url, "NATS_URL": nats_url}, tmp_path)
    try:
        async with grpc.aio.insecure_channel(stack.endpoints["lobby"]) as channel:
            lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
            for _ in range(600):  # each refusal logs a warning line of about 250 bytes
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await lobby.ListTables(lobby_pb2.ListTablesRequest(), timeout=10)
                assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            reply = await lobby.Login(lobby_pb2.LoginRequest(name="still-here"), timeout=10)
        assert reply.token
        logged = stack.log_path.read_text()
        assert len(logged.encode()) > 64 * 1024
        assert logged.count('"code": "UNAUTHENTICATED"') >= 600
    finally:
        stack.stop()
