"""A bounded, seeded fuzzer for every RPC the servers list (no tests of its own).

The RPCs come from the servers: reflection names the services, the
descriptors in shared/api (and grpc_health) describe them, so a new RPC is
fuzzed without a change here. The whole request list is drawn from one
``random.Random(seed)`` before anything is sent, so the same seed sends the
same requests in the same order (only the ids the server hands out differ);
only their interleaving (a few in flight at once, as real clients do) varies.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import math
import random
import re
import string
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2  # noqa: F401 - registers grpc.health.v1 in the pool
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

from services.host.launch import LaunchedStack, launched_stack
from shared.api.stammtisch.v1 import (  # noqa: F401 - register the services in the pool
    arbiter_pb2,
    engine_pb2,
    lobby_pb2,
    scoring_pb2,
)
from shared.config import SERVICE_NAMES, Settings
from shared.infra.credentials import NATS_USER, Login
from shared.infra.local import free_port, start_nats
from shared.rpc.auth import key_id

#: Statuses no client input may ever produce (issue 10).
FORBIDDEN = frozenset({"INTERNAL", "UNKNOWN"})
#: Methods that ignore an attached token, whatever it is (issue 10, finding 7).
PUBLIC = ("/grpc.health.v1.Health/", "/stammtisch.v1.LobbyService/Login")
#: How long a unary call may take before it counts as a stall of the server.
UNARY_TIMEOUT = 10.0
#: How long a stream is read before the fuzzer drops it.
STREAM_WINDOW = 0.3
#: The stack's request size limit (STAMMTISCH_MAX_MESSAGE_BYTES, left at its default).
MAX_REQUEST_BYTES = Settings().max_message_bytes
#: Label of a stream that was still open when the fuzzer dropped it.
DROPPED_OPEN = "DROPPED_OPEN"
#: Label of a client-streaming call whose one write lost the race with its own expired deadline
#: (see :func:`lost_to_its_deadline`); never a status the server sent.
WRITE_AFTER_DEADLINE = "WRITE_AFTER_DEADLINE"
#: The details grpc's aio client puts on a call itself when a send of its own fails in grpc-core
#: (``set_internal_error`` in grpc/aio/_call.py); a server's INTERNAL says "see server logs".
CORE_SEND_FAILED = "Internal error from Core"

INT32 = (0, 1, -1, 2, 3, 4, 5, 6, 7, 19, 20, 100, 2**31 - 1, -(2**31))
INT64 = (*INT32, 2**40, 2**63 - 1, -(2**63))
UINT32 = (0, 1, 2, 7, 2**32 - 1)
UINT64 = (0, 1, 2, 7, 2**64 - 1)
FLOATS = (0.0, -1.0, 1e308, -1e308, math.inf, -math.inf, math.nan)
UNKNOWN_ENUMS = (99, -1, 2**31 - 1, -(2**31))
ACTION_TYPES = ("play", "discard", "meinz", "pass", "call", "lay", "attach", "draw", "stop",
                "trump", "choose", "give", "take", "flora", "pruegel", "schnorrer", "monster",
                "", "PLAY", "play ", "drop table")
ODD_STRINGS = ("", " ", "a", "\r\n", "a b", "x\x00y", "bell\x07", "no.such>table*", "{tag}",
               "../../etc/passwd", "%s%n%x", "null", "ü" * 100, "😀" * 64, "\u202e" * 10,
               "x" * 65, "x" * 201, "x" * 5000, "x" * 12_000, "ü" * 2000, "a.b.c", "$SYS.>", "*", ">")

#: A value far below the size limit whose echo in a status message would not fit the trailers.
LONG_VALUE = "ü" * 2000
#: Bytes that are not a valid message of most (or any) request type.
GARBAGE = (b"\xff\xff\xff", b"\x07", b"\x00", b"\x0a\xff\xff\xff\xff\x0f",
           b"\x08" + b"\xff" * 11, b"\x0a\x02\xc3\x28", b"\x0a\x05ab", b"\x12\x03\xed\xa0\x80",
           b"\x1a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", b"\x0b\x0b\x0b\x0b")


@dataclass(frozen=True)
class Rpc:
    """One method of one server, with its message classes."""

    service: str  # the endpoint it is served on: "lobby", "engine", ...
    path: str  # "/stammtisch.v1.LobbyService/Login"
    request: type[Message]
    response: type[Message]
    streaming: bool
    #: A bidirectional stream (Play): the request goes as the only message the client sends.
    client_streaming: bool = False


async def listed_services(address: str) -> list[str]:
    """The service names the server at ``address`` lists through reflection."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        call = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
        async for reply in call:
            return [service.name for service in reply.list_services_response.service]
    raise AssertionError(f"{address}: reflection answered nothing")


async def discover(endpoints: Mapping[str, str]) -> list[Rpc]:
    """Every RPC of every listed service (health included): unary, server-streaming and
    bidirectional (Play, sent one message and read like a server stream).

    Reflection itself (grpc's own bidirectional stream) is left out: it is
    library code, and the fuzzer only just used it.
    """
    pool = descriptor_pool.Default()
    rpcs: list[Rpc] = []
    for service, address in endpoints.items():
        for name in await listed_services(address):
            if name.startswith("grpc.reflection."):
                continue
            for method in pool.FindServiceByName(name).methods:
                assert method.server_streaming or not method.client_streaming, \
                    f"{name}/{method.name}: client-streaming calls are not fuzzed"
                rpcs.append(Rpc(service, f"/{name}/{method.name}",
                                message_factory.GetMessageClass(method.input_type),
                                message_factory.GetMessageClass(method.output_type),
                                method.server_streaming, method.client_streaming))
    return rpcs


# -- tokens ---------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def handmade_jwt(header: Mapping[str, Any], claims: Mapping[str, Any], key: bytes | None) -> str:
    """A JWT built by hand (so it can lie in every part); unsigned when ``key`` is None."""
    signing = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    signature = "" if key is None else _b64(hmac.new(key, signing.encode(), hashlib.sha256).digest())
    return f"{signing}.{signature}"


def signed_token(secret: str, claims: Mapping[str, Any]) -> str:
    """A token signed with the server's own secret and key id, with any claims at all: a
    forgery only where the claims are ones the server never hands out."""
    return handmade_jwt({"alg": "HS256", "typ": "JWT", "kid": key_id(secret)}, claims, secret.encode())


def forged_tokens(secret: str, victim: str) -> dict[str, str]:
    """Token label -> token: forged, expired, odd-id and garbage tokens (issue 10, 1-3 and 7)."""
    now = time.time()
    claims = {"sub": victim, "name": "Mallory", "iat": int(now), "exp": int(now) + 3600}
    return {
        "wrong-secret": handmade_jwt({"alg": "HS256", "typ": "JWT", "kid": key_id(secret)}, claims,
                                     b"not-the-secret-but-long-enough-for-hs256"),
        # The development secret that once stood in the source (issue 10, finding 1).
        "old-dev-secret": signed_token("stammtisch-dev-secret-change-me", claims),
        "wrong-kid": handmade_jwt({"alg": "HS256", "typ": "JWT", "kid": "k1"}, claims, secret.encode()),
        "alg-none": handmade_jwt({"alg": "none", "typ": "JWT", "kid": key_id(secret)}, claims, None),
        "wrong-secret-5000-id": handmade_jwt({"alg": "HS256", "typ": "JWT"},
                                             {**claims, "sub": "p" * 5000}, b"wrong"),
        "expired": signed_token(secret, {**claims, "exp": int(now) - 7200}),
        "exp-nan": signed_token(secret, {**claims, "exp": math.nan}),
        "exp-infinity": signed_token(secret, {**claims, "exp": math.inf}),
        "exp-string": signed_token(secret, {**claims, "exp": "never"}),
        "no-exp": signed_token(secret, {"sub": victim, "name": "Mallory"}),
        "id-5000": signed_token(secret, {**claims, "sub": "p" * 5000}),
        "id-4300": signed_token(secret, {**claims, "sub": "q" * 4300}),
        "id-empty": signed_token(secret, {**claims, "sub": ""}),
        "id-spaces": signed_token(secret, {**claims, "sub": "a b c"}),
        "id-crlf": signed_token(secret, {**claims, "sub": "a\r\nPUB x 1\r\n"}),
        "id-subject": signed_token(secret, {**claims, "sub": "a.*.>"}),
        "id-number": signed_token(secret, {**claims, "sub": 12345}),
        "garbage": "garbage",
        "garbage-3-parts": "a.b.c",
        "garbage-long": "x" * 5000,
        "garbage-empty": "",
    }


# -- requests -------------------------------------------------------------------------


@dataclass
class Known:
    """Real values to mix in, so requests reach the handlers' deeper paths."""

    strings: dict[str, list[str]] = field(default_factory=dict)
    ints: dict[str, list[int]] = field(default_factory=dict)

    def add(self, name: str, *values: str) -> None:
        """Remember strings for fields called ``name``."""
        self.strings.setdefault(name, []).extend(values)

    def add_ints(self, name: str, *values: int) -> None:
        """Remember numbers for fields called ``name``."""
        self.ints.setdefault(name, []).extend(values)


@dataclass
class Request:
    """One generated request: what to send, to where, with what."""

    kind: str
    rpc: Rpc
    payload: Message | bytes
    token: str  # a label of the token set ("valid", "none", "jwt-alg-none", ...)
    timeout: float = UNARY_TIMEOUT
    drop: str = ""  # streams: "" read then cancel, "channel" close the connection under it
    index: int = -1  # its place in the request list

    @property
    def size(self) -> int:
        """Bytes on the wire (without framing)."""
        return len(self.payload) if isinstance(self.payload, bytes) else self.payload.ByteSize()

    @property
    def request_id(self) -> str:
        """The x-request-id it is sent with: the server logs the call under it."""
        return f"fuzz-{self.index}"

    def describe(self) -> str:
        """A short, printable description for a failure message."""
        body = self.payload.hex()[:80] if isinstance(self.payload, bytes) else \
            str(self.payload).replace("\n", " ")[:160]
        return f"#{self.index} {self.kind} {self.rpc.path} token={self.token} {body}"


class Generator:
    """Draws requests from one seeded random source."""

    def __init__(self, seed: int, rpcs: Sequence[Rpc], known: Known, tokens: Sequence[str]) -> None:
        self.rng = random.Random(seed)
        self.rpcs = list(rpcs)
        self.streams = [rpc for rpc in rpcs if rpc.streaming]
        self.known = known
        self.tokens = list(tokens)

    def requests(self, count: int) -> list[Request]:
        """Every RPC with every attack once, then random requests up to ``count`` in all."""
        made: list[Request] = []
        for rpc in self.rpcs:
            made.append(self.fields(rpc))
            made.extend(self.token(rpc, label) for label in self.tokens)
            made.extend(self.garbage(rpc, payload) for payload in GARBAGE)
            made.extend(self.long_values(rpc))
            made.append(self.deadline(rpc))
            made.append(self.oversized(rpc))
            if rpc.streaming:
                made.extend(self.stream_drop(rpc, drop, table_id)
                            for table_id in self._table_ids(rpc) for drop in ("", "channel"))
        kinds: list[tuple[Callable[[], Request], int]] = [
            (lambda: self.fields(self.rng.choice(self.rpcs)), 50),
            (lambda: self.garbage(self.rng.choice(self.rpcs), self._random_garbage()), 10),
            (lambda: self.token(self.rng.choice(self.rpcs), self.rng.choice(self.tokens)), 10),
            (lambda: self.deadline(self.rng.choice(self.rpcs)), 10),
            (lambda: self.stream_drop(self.rng.choice(self.streams), self.rng.choice(("", "channel"))), 15),
            (lambda: self.oversized(self.rng.choice(self.rpcs)), 5)]
        while len(made) < count:
            made.append(self.rng.choices([k[0] for k in kinds], [k[1] for k in kinds])[0]())
        for index, request in enumerate(made):
            request.index = index
        return made

    # -- kinds --

    def fields(self, rpc: Rpc) -> Request:
        """Random, extreme and unknown field values (mostly with a valid token)."""
        token = "valid" if self.rng.random() < 0.8 else self.rng.choice(self.tokens)
        return Request("fields", rpc, self.message(rpc.request.DESCRIPTOR, oddness=0.4), token)

    def token(self, rpc: Rpc, label: str) -> Request:
        """A well-formed request carrying the token ``label`` names."""
        return Request("token", rpc, self.message(rpc.request.DESCRIPTOR, oddness=0.0), label)

    def long_values(self, rpc: Rpc) -> list[Request]:
        """A well-formed request per string field (Action's too) with a long value in it:
        2,000 'ü' stay far below the size limit, but a message quoting them does not fit
        a client's status trailers unclipped."""
        made = []
        for path in _string_fields(rpc.request.DESCRIPTOR):
            message = self.message(rpc.request.DESCRIPTOR, oddness=0.0)
            *outer, last = path
            target = message
            for name in outer:
                target = getattr(target, name)
            if _repeated(target.DESCRIPTOR.fields_by_name[last]):
                getattr(target, last).append(LONG_VALUE)
            else:
                setattr(target, last, LONG_VALUE)
            made.append(Request("long-value", rpc, message, "valid"))
        return made

    def garbage(self, rpc: Rpc, payload: bytes) -> Request:
        """Bytes sent as they are, without a serializer."""
        return Request("garbage", rpc, payload, self.rng.choice(("valid", "none")))

    def deadline(self, rpc: Rpc) -> Request:
        """A well-formed request with a 1 ms deadline."""
        return Request("deadline", rpc, self.message(rpc.request.DESCRIPTOR, oddness=0.1), "valid",
                       timeout=0.001)

    def stream_drop(self, rpc: Rpc, drop: str, table_id: str | None = None) -> Request:
        """A stream read briefly, then cancelled or cut off with its channel."""
        message: Any = self.message(rpc.request.DESCRIPTOR, oddness=0.05)
        if table_id is not None:
            message.table_id = table_id
            if "after_seq" in message.DESCRIPTOR.fields_by_name:
                message.after_seq = 0
        return Request("stream-drop", rpc, message, "valid", drop=drop)

    def _table_ids(self, rpc: Rpc) -> list[str | None]:
        """Every real table for a request that names one (to open real streams), else None."""
        if "table_id" not in rpc.request.DESCRIPTOR.fields_by_name:
            return [None]
        return list(self.known.strings.get("table_id", [None]))

    def oversized(self, rpc: Rpc) -> Request:
        """A request over the server's size limit (a huge string field, or bytes claiming one)."""
        message = self.message(rpc.request.DESCRIPTOR, oddness=0.1)
        strings = [f for f in message.DESCRIPTOR.fields
                   if f.type == FieldDescriptor.TYPE_STRING and not _repeated(f)]
        if not strings:
            return Request("oversized", rpc, b"\x0a\xff\xff\x03" + b"o" * 70_000, "valid")
        setattr(message, self.rng.choice(strings).name, "o" * self.rng.choice((70_000, 300_000)))
        return Request("oversized", rpc, message, "valid")

    def _random_garbage(self) -> bytes:
        if self.rng.random() < 0.7:
            return self.rng.randbytes(self.rng.randint(1, 64))
        return self._nested(self.rng.randint(50, 300))

    # -- values --

    def message(self, descriptor: Any, oddness: float, depth: int = 0) -> Message:
        """A message of ``descriptor`` with a random subset of its fields set."""
        message = message_factory.GetMessageClass(descriptor)()
        for fd in descriptor.fields:
            if self.rng.random() < min(oddness, 0.25):
                continue
            if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
                self._fill_map(getattr(message, fd.name), fd, oddness, depth)
            elif _repeated(fd):
                self._fill_repeated(getattr(message, fd.name), fd, oddness, depth)
            elif fd.type == FieldDescriptor.TYPE_MESSAGE:
                if depth < 3:
                    getattr(message, fd.name).CopyFrom(self.message(fd.message_type, oddness, depth + 1))
            else:
                setattr(message, fd.name, self.scalar(fd, oddness))
        return message

    def _fill_repeated(self, target: Any, fd: Any, oddness: float, depth: int) -> None:
        count = self.rng.choice((0, 1, 2, 3, 10, 2000)) if self.rng.random() < oddness else \
            self.rng.randint(0, 3)
        for _ in range(count):
            if fd.type == FieldDescriptor.TYPE_MESSAGE:
                if depth < 3:
                    target.add().CopyFrom(self.message(fd.message_type, oddness, depth + 1))
            else:
                target.append(self.scalar(fd, oddness))

    def _fill_map(self, target: Any, fd: Any, oddness: float, depth: int) -> None:
        """Entries of a map field; message values (a Struct's) nest a few levels, a few each."""
        key_fd, value_fd = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
        for _ in range(self.rng.choice((0, 1, 2, 3, 500) if depth == 0 else (0, 1, 2, 3))):
            key = self.scalar(key_fd, oddness)
            if value_fd.type != FieldDescriptor.TYPE_MESSAGE:
                target[key] = self.scalar(value_fd, oddness)
            elif depth < 3:
                target[key].CopyFrom(self.message(value_fd.message_type, oddness, depth + 1))

    def scalar(self, fd: Any, oddness: float) -> Any:
        """A value for one scalar field: often a real one, sometimes an odd or extreme one."""
        odd = self.rng.random() < oddness
        kind = fd.type
        if kind == FieldDescriptor.TYPE_STRING:
            return self._string(fd.name, odd)
        if kind == FieldDescriptor.TYPE_BYTES:
            return self.rng.randbytes(self.rng.randint(0, 64))
        if kind == FieldDescriptor.TYPE_BOOL:
            return self.rng.random() < 0.5
        if kind == FieldDescriptor.TYPE_ENUM:
            values = self.known.ints.get(fd.name) or [v.number for v in fd.enum_type.values]
            return self.rng.choice(UNKNOWN_ENUMS if odd else values)
        if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
            return self.rng.choice(FLOATS)
        if kind in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32):
            return self.rng.choice(UINT32)
        if kind in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64):
            return self.rng.choice(UINT64)
        wide = kind in (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64,
                        FieldDescriptor.TYPE_SFIXED64)
        if odd:
            return self.rng.choice(INT64 if wide else INT32)
        return self.rng.choice(self.known.ints.get(fd.name) or range(-1, 9))

    def _string(self, name: str, odd: bool) -> str:
        if not odd and name in self.known.strings:
            return self.rng.choice(self.known.strings[name])
        if self.rng.random() < 0.6:
            return self.rng.choice(ODD_STRINGS)
        if self.rng.random() < 0.5:
            return "".join(self.rng.choices(string.printable, k=self.rng.randint(1, 64)))
        return "".join(chr(self.rng.choice((self.rng.randint(0x20, 0xD7FF),
                                            self.rng.randint(0xE000, 0x10FFFF))))
                       for _ in range(self.rng.randint(1, 300)))

    def _nested(self, depth: int) -> bytes:
        """Length-delimited field 3 inside field 3 ..., deeper than a parser recurses."""
        data = b""
        for _ in range(depth):
            data = b"\x1a" + _varint(len(data)) + data
        return data


def _string_fields(descriptor: Any, depth: int = 0) -> list[tuple[str, ...]]:
    """Paths of the string fields of a message and of its (non-repeated) message fields."""
    paths: list[tuple[str, ...]] = []
    for fd in descriptor.fields:
        if fd.type == FieldDescriptor.TYPE_STRING:
            paths.append((fd.name,))
        elif fd.type == FieldDescriptor.TYPE_MESSAGE and not _repeated(fd) and depth < 2:
            paths.extend((fd.name, *inner) for inner in _string_fields(fd.message_type, depth + 1))
    return paths


def _repeated(fd: Any) -> bool:
    return bool(fd.is_repeated)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


# -- sending --------------------------------------------------------------------------


@dataclass
class Tally:
    """What the fuzzer saw: statuses by code and every answer that breaks the rules."""

    codes: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    #: (code, method, kind, token) -> count, for the problems only.
    problem_kinds: Counter[tuple[str, str, str, str]] = field(default_factory=Counter)
    by_method: dict[str, Counter[str]] = field(default_factory=dict)
    #: Calls counted as lost to their own deadline: each must have no error in the server log.
    deadline_races: list[Request] = field(default_factory=list)

    @property
    def sent(self) -> int:
        """Requests sent (every request ends in exactly one counted outcome)."""
        return sum(self.codes.values())

    def record(self, request: Request, code: str, details: str, consistent: bool = True) -> None:
        """Count one outcome; keep it as a problem when no client input may cause it.

        Besides INTERNAL and UNKNOWN: a unary call that stalls, Login or health
        turning a caller away for its token, RESOURCE_EXHAUSTED for a request
        within the size limit (a refusal too big for its trailers), and status
        details that contradict the status code.
        """
        self.codes[code] += 1
        self.by_method.setdefault(request.rpc.path, Counter())[code] += 1
        stalled = code == "DEADLINE_EXCEEDED" and request.timeout == UNARY_TIMEOUT
        turned_away = code == "UNAUTHENTICATED" and request.rpc.path.startswith(PUBLIC)
        exhausted = code == "RESOURCE_EXHAUSTED" and request.size <= MAX_REQUEST_BYTES
        if code == WRITE_AFTER_DEADLINE:
            self.deadline_races.append(request)
        if code in FORBIDDEN or stalled or turned_away or exhausted or not consistent:
            self.problems.append(f"{code} ({details[:200]!r}) for {request.describe()}")
            self.problem_kinds[code, request.rpc.path, request.kind, request.token] += 1


class Sender:
    """Sends requests over one channel per service (and throw-away ones for abrupt drops)."""

    def __init__(self, endpoints: Mapping[str, str], tokens: Mapping[str, str]) -> None:
        self.endpoints = dict(endpoints)
        self.metadata: dict[str, tuple[tuple[str, str], ...]] = {
            label: (("authorization", f"Bearer {token}"),) for label, token in tokens.items()}
        self.metadata["none"] = ()
        self.channels = {name: grpc.aio.insecure_channel(address) for name, address in endpoints.items()}
        self.tally = Tally()

    async def close(self) -> None:
        """Close every channel."""
        await asyncio.gather(*(channel.close() for channel in self.channels.values()))

    async def run(self, requests: Sequence[Request], in_flight: int = 16) -> Tally:
        """Send every request, ``in_flight`` at a time, in list order."""
        queue: asyncio.Queue[Request] = asyncio.Queue()
        for request in requests:
            queue.put_nowait(request)

        async def worker() -> None:
            while not queue.empty():
                request = queue.get_nowait()
                self.tally.record(request, *await self.send(request))

        await asyncio.gather(*(worker() for _ in range(in_flight)))
        return self.tally

    async def send(self, request: Request) -> tuple[str, str, bool]:
        """One request's outcome: status code name, details, and whether the status
        details (google.rpc.Status), if any, agree with the status."""
        if request.drop == "channel":
            async with grpc.aio.insecure_channel(self.endpoints[request.rpc.service]) as channel:
                return await self._call(channel, request)
        return await self._call(self.channels[request.rpc.service], request)

    async def _call(self, channel: grpc.aio.Channel, request: Request) -> tuple[str, str, bool]:
        raw = isinstance(request.payload, bytes)
        serializer = None if raw else request.rpc.request.SerializeToString
        deserializer = None if raw else request.rpc.response.FromString
        metadata = (*self.metadata[request.token], ("x-request-id", request.request_id))
        started = time.monotonic()
        try:
            if not request.rpc.streaming:
                await channel.unary_unary(request.rpc.path, request_serializer=serializer,
                                          response_deserializer=deserializer)(
                    request.payload, metadata=metadata, timeout=request.timeout)
                return "OK", "", True
            if request.rpc.client_streaming:  # written once accepted, as the SDK's PlayStream does
                call: Any = channel.stream_stream(request.rpc.path, request_serializer=serializer,
                                                  response_deserializer=deserializer)(
                    metadata=metadata, timeout=request.timeout)
                await call.initial_metadata()
                try:
                    await call.write(request.payload)
                except asyncio.InvalidStateError:
                    pass  # refused: the read raises its status
                except grpc.aio.AioRpcError as err:
                    if not lost_to_its_deadline(err, time.monotonic() - started, request.timeout):
                        raise
                    return WRITE_AFTER_DEADLINE, err.details() or "", True
            else:
                call = channel.unary_stream(request.rpc.path, request_serializer=serializer,
                                            response_deserializer=deserializer)(
                    request.payload, metadata=metadata, timeout=request.timeout)
            try:
                async with asyncio.timeout(STREAM_WINDOW):
                    async for _reply in call:
                        pass
            except TimeoutError:
                if request.drop != "channel":  # else the channel closes under the stream
                    call.cancel()
                return DROPPED_OPEN, "", True
            return "OK", "", True
        except grpc.aio.AioRpcError as err:
            return err.code().name, err.details() or "", _details_agree(err)


def lost_to_its_deadline(err: grpc.aio.AioRpcError, elapsed: float, timeout: float) -> bool:
    """Whether a write's INTERNAL is grpc's client-side race with the call's own deadline.

    When the deadline expires in grpc-core between the client's "call done?" check and its
    send, the send fails and grpc's aio client replaces the call's status with INTERNAL
    "Internal error from Core" (grpc/grpc#2685: a deadline's status is best effort). grpc
    alone does it, no server code involved: a bare bidi handler that accepts the call, and
    a client writing once with a 1 ms deadline, got it for 62 of 3,000 calls (grpc 1.85).
    Counted as a deadline outcome only when the deadline had passed when the write failed,
    and only with the client's own wording; the test then requires that the server log
    holds no error for the call (:func:`logged_errors`), so a real INTERNAL still fails it.
    """
    return (err.code() is grpc.StatusCode.INTERNAL and err.details() == CORE_SEND_FAILED
            and elapsed >= timeout)


def logged_errors(lines: Sequence[str], requests: Sequence[Request]) -> list[str]:
    """The server log lines of ``requests`` (by request id) at error level or with a status
    no client input may cause."""
    ids = {request.request_id for request in requests}
    found = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("request_id") in ids and (
                entry.get("level") in ("error", "critical") or entry.get("code") in FORBIDDEN):
            found.append(line)
    return found


def _details_agree(err: grpc.aio.AioRpcError) -> bool:
    try:
        rpc_status.from_call(err)  # type: ignore[arg-type]
    except ValueError:
        return False
    return True


# -- the stack under test -------------------------------------------------------------


@dataclass
class FuzzedStack:
    """A `stammtisch up` child and the NATS it uses (with monitoring)."""

    launched: LaunchedStack
    nats_monitor: int

    @property
    def endpoints(self) -> dict[str, str]:
        """The gRPC services by name."""
        return {name: self.launched.endpoints[name]
                for name in SERVICE_NAMES}

    def nats_connection(self) -> tuple[int, ...] | None:
        """The client ids of the stack's NATS connections (the main one and the one for live
        news) as the NATS server sees them, if any."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.nats_monitor}/connz", timeout=5) as page:
            connections = json.load(page).get("connections") or []
        ids = sorted(c["cid"] for c in connections if str(c.get("name", "")).startswith("stammtisch-"))
        assert len(ids) <= 2, f"the stack has more NATS connections than its two: {connections}"
        return tuple(ids) or None

    def open_streams(self) -> dict[str, float]:
        """The stammtisch_open_streams gauge by service, from the stack's /metrics."""
        url = f"http://{self.launched.endpoints['metrics']}/metrics"
        with urllib.request.urlopen(url, timeout=5) as page:
            text = page.read().decode()
        return {found.group(1): float(found.group(2)) for found in _OPEN_STREAMS.finditer(text)}

    def log_lines(self) -> list[str]:
        """Its log (stderr) so far."""
        return self.launched.log_path.read_text().splitlines()

    def stdout_lines(self) -> list[str]:
        """What it printed on stdout after the banner (launch.py copies it to a file)."""
        path = self.launched.log_path.parent / "stdout.log"
        return path.read_text().splitlines() if path.exists() else []


_OPEN_STREAMS = re.compile(r'^stammtisch_open_streams\{service="(\w+)"\} (\S+)$', re.MULTILINE)
#: Signs of a traceback in a plain or a structlog JSON log line.
TRACEBACK_MARKS = ("Traceback (most recent call last)", '"exception":', "ExecuteBatchError")


def troubled_lines(lines: Sequence[str]) -> list[str]:
    """Log lines with a traceback, or at error level or above."""
    return [line for line in lines
            if any(mark in line for mark in TRACEBACK_MARKS)
            or '"level": "error"' in line or '"level": "critical"' in line]


@contextlib.contextmanager
def fuzzed_stack(redis_url: str, data_dir: Path, env: Mapping[str, str]) -> Iterator[FuzzedStack]:
    """`stammtisch up` on free ports against the session's Redis and a NATS of its own.

    The NATS server is ours so that its monitoring port can tell whether the
    stack's connection ever dropped.
    """
    monitor = free_port()
    nats = start_nats(free_port(), data_dir / "nats", Login.fresh(NATS_USER), monitor_port=monitor)
    try:
        with launched_stack({"REDIS_URL": redis_url, "NATS_URL": nats.url, **env},
                            data_dir / "stack") as launched:
            yield FuzzedStack(launched, monitor)
    finally:
        nats.stop()
