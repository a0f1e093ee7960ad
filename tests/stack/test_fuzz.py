"""Bounded fuzz of every RPC of every service, against `stammtisch up` as a user runs it (issue 10).

A few thousand seeded requests: random, extreme and oversized fields, bytes
that are no protobuf message, forged, expired and garbage tokens, wrong tables
and seats (real tables too, where the caller sits and where it does not), 1 ms
deadlines, and server streams opened and dropped. Afterwards nothing may have
answered INTERNAL or UNKNOWN, the log holds no traceback or error, every
service is SERVING, the stack's NATS connection is the one it started with,
no stream is left counted open, and a game still plays to the end.

One INTERNAL is grpc's own, not the server's: a Play call written once accepted with a
1 ms deadline can have its write fail in grpc-core because the deadline expired just
before, and grpc's aio client then reports INTERNAL "Internal error from Core" instead of
DEADLINE_EXCEEDED (grpc/grpc#2685: a deadline's status is best effort; grpc alone, no
Stammtisch code, does it for about 2% of such calls). Such a call counts as
WRITE_AFTER_DEADLINE only when its own deadline had passed when the write failed, with
the client's own wording, and only if the server log holds no error for its request id;
every other INTERNAL, and a server error behind a counted one, still fails the test.

The stack is a `stammtisch up` child, not the in-process fixture, so that it
runs with its own logging set-up and its whole log is a file of its own; a
server that blocks or dies shows as stalls, not as a hung test.
Replay or vary a run with STAMMTISCH_FUZZ_SEED and STAMMTISCH_FUZZ_REQUESTS.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shared.api.stammtisch.v1 import clubs_pb2, engine_pb2
from shared.games.catalog import CATALOGUE
from shared.games.registry import bot_levels
from shared.sdk import clubs as clubs_sdk
from shared.sdk import tournament as tournament_sdk
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.fuzz import (
    ACTION_TYPES,
    CORE_SEND_FAILED,
    FuzzedStack,
    Generator,
    Known,
    Request,
    Rpc,
    Sender,
    discover,
    forged_tokens,
    fuzzed_stack,
    logged_errors,
    lost_to_its_deadline,
    troubled_lines,
)
from tests.support.stack import bot_table, close_all, log_in, logged_in, seated_table

pytestmark = pytest.mark.integration

SEED = int(os.environ.get("STAMMTISCH_FUZZ_SEED") or 20261201)
REQUESTS = int(os.environ.get("STAMMTISCH_FUZZ_REQUESTS") or 3000)
SECRET = "fuzz-test-secret-" + "s" * 32
#: Well-formed numbers by field name (odd ones come from the generator itself).
NUMBERS = {"seats": (3, 4), "seat": (0, 1, 2, 3), "limit": (0, 10, 100),
           "after_seq": (0, 1, 5), "round": (1, 2), "turn_seconds": (0, 5, 60)}
CARD = re.compile(r'"([A-Z][A-Z0-9]{1,12})"')


async def _tables(alice: StammtischClient, bob: StammtischClient) -> dict[str, str]:
    """Real tables of every kind the fuzzer aims at: waiting and running, seated and not."""
    tables = {"alice-waiting": (await alice.create_table("willi-stich", 3)).table_id,
              "bob-waiting": (await bob.create_table("willi-wacker", 3)).table_id}
    for owner, game, seats in ((alice, "willi-stich", 3), (bob, "willi", 4), (alice, "wie-waldi", 2),
                               (bob, "wie-waldi", 2)):
        tables[f"{'alice' if owner is alice else 'bob'}-running-{game}"] = await bot_table(owner, game, seats)
    return tables


async def _tournaments(alice: StammtischClient, bob: StammtischClient) -> list[str]:
    """Real tournaments: one in registration (Bob registered), one running."""
    waiting = await tournament_sdk.create_tournament(alice, "Fuzz", "willi", "series", capacity=8,
                                                     table_size=3)
    await tournament_sdk.register(bob, waiting.tournament_id)
    running = await tournament_sdk.create_tournament(bob, "Fuzz 2", "willi-stich", "knockout",
                                                     capacity=4, table_size=3)
    await tournament_sdk.register(alice, running.tournament_id)
    await tournament_sdk.start(bob, running.tournament_id)
    return [waiting.tournament_id, running.tournament_id]


async def _known(alice: StammtischClient, player_ids: list[str], tables: dict[str, str],
                 rng: random.Random) -> Known:
    """Real ids, names and cards for the generator to mix in."""
    known = Known()
    known.add("table_id", *tables.values())
    known.add("player_id", *player_ids)
    known.add("action_id", *(f"{rng.getrandbits(128):032x}" for _ in range(20)))
    known.add("name", "Fuzz", "Zoë", "n" * 24)
    known.add("level", "heuristic", "random")
    known.add("type", *ACTION_TYPES)
    known.add("text", "hello", "t" * 200)
    for name, numbers in NUMBERS.items():
        known.add_ints(name, *numbers)
    known.add("service", "", "stammtisch.v1.LobbyService", "stammtisch.v1.EngineService",
              "stammtisch.v1.ArbiterService", "stammtisch.v1.ScoringService",
              "stammtisch.v1.TournamentService", "nope")
    cards: set[str] = set()
    for name, table_id in tables.items():
        if name.startswith("alice-running"):
            cards |= set(CARD.findall(str((await alice.wait_for_game(table_id)).view)))
    known.add("game", *CATALOGUE, "", "GAME_WILLI")
    # Option names as map keys (TableOptions.game_options), the game's and others.
    known.add("key", *{option.name for game in CATALOGUE.values() for option in game.options}, "nope")
    card = sorted(cards)[0] if cards else "H7"
    known.add("fields_json", "", "{}", json.dumps({"card": card}), json.dumps({"pile": 0}),
              json.dumps({"cards": sorted(cards)[:3]}), "[1]", "null", "{\"type\": \"play\"}", "{")
    return known


async def _health(stack: FuzzedStack) -> dict[str, str]:
    """Every service's status on its own health endpoint (overall and by full name)."""
    found = {}
    for name, address in stack.endpoints.items():
        async with grpc.aio.insecure_channel(address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            for service in ("", f"stammtisch.v1.{name.capitalize()}Service"):
                try:
                    reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
                    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
                except grpc.aio.AioRpcError as err:
                    status = err.code().name
                found[f"{name}:{service}"] = status
    return found


async def _streams_closed(stack: FuzzedStack, seconds: float = 10.0) -> dict[str, float]:
    """The open-streams gauge once it is all zero, or as it is when time runs out."""
    for _ in range(int(seconds / 0.2)):
        gauge = stack.open_streams()
        if not any(gauge.values()):
            return gauge
        await asyncio.sleep(0.2)
    return stack.open_streams()


async def _clubs(alice: StammtischClient, bob: StammtischClient) -> dict[str, list[str]]:
    """A real club (Bob a member), friends, a private table and notifications to aim at."""
    club = (await clubs_sdk.call(alice, "CreateClub", name="Fuzz club",
                                 join_policy=clubs_pb2.CLUB_JOIN_POLICY_PUBLIC)).club
    await clubs_sdk.call(bob, "JoinClub", club_id=club.club_id)
    await clubs_sdk.befriend(alice, bob)
    _table, code = await clubs_sdk.create_private_table(alice, "willi", 3, turn_seconds=86_400)
    notes = (await clubs_sdk.inbox(alice)).notifications
    return {"club_id": [club.club_id], "code": [club.code, code],
            "notification_ids": [note.notification_id for note in notes]}


async def _play_short_game(stack: FuzzedStack) -> str:
    """Three fresh clients play Willi Stich's last round (one card each), one of them over a
    Play stream: "over", or what failed."""
    clients: list[StammtischClient] = []
    try:
        clients = await log_in(Endpoints.of(stack.endpoints), "after0", "after1", "after2")
        table_id = await seated_table(clients, "willi-stich", start_round=19, turn_seconds=0)
        bot = bot_levels("willi-stich")["heuristic"]
        ends = await asyncio.wait_for(asyncio.gather(*(
            play_seat(c, table_id, bot(), random.Random(i), streamed=i == 0)
            for i, c in enumerate(clients))), 30)
        return "over" if all(end.view.get("over") for end in ends) else f"not over: {ends[0].view}"
    except (grpc.aio.AioRpcError, TimeoutError) as err:
        return "failed: " + " ".join(repr(err).split())[:600]
    finally:
        await close_all(clients)


async def test_fuzz_every_rpc_leaves_the_stack_serving_and_playable(
        infra: tuple[str, str], tmp_path: Path) -> None:
    redis_url, _nats_url = infra
    print(f"\nfuzz: seed {SEED}, {REQUESTS} requests (STAMMTISCH_FUZZ_SEED / STAMMTISCH_FUZZ_REQUESTS)")
    env = {"STAMMTISCH_TOKEN_SECRET": SECRET, "STAMMTISCH_BOT_DELAY": "0.01",
           # The fuzzer plays only a few players: lift the rate limit so requests reach the handlers.
           "STAMMTISCH_ACTIONS_PER_SECOND": "100000"}
    with fuzzed_stack(redis_url, tmp_path, env) as stack:
        nats_before = stack.nats_connection()
        assert nats_before is not None, "the stack has no NATS connection to begin with"
        async with logged_in(Endpoints.of(stack.endpoints), "Alice", "Bob") as (alice, bob):
            tables = await _tables(alice, bob)
            rpcs = await discover(stack.endpoints)
            tokens = {"valid": alice.token, "other": bob.token, **forged_tokens(SECRET, bob.player_id)}
            known = await _known(alice, [alice.player_id, bob.player_id], tables, random.Random(SEED))
            known.add("tournament_id", *await _tournaments(alice, bob))
            for name, values in (await _clubs(alice, bob)).items():
                known.add(name, *values)
            requests = Generator(SEED, rpcs, known, sorted(tokens)).requests(REQUESTS)
            sender = Sender(stack.endpoints, tokens)
            try:
                tally = await sender.run(requests)
            finally:
                await sender.close()
        print(f"fuzz: {len(rpcs)} RPCs, {tally.sent} requests sent; statuses by code: "
              f"{dict(tally.codes.most_common())}")
        for path, codes in sorted(tally.by_method.items()):
            print(f"fuzz: {path}: {dict(codes.most_common())}")
        for (code, path, kind, token), times in sorted(tally.problem_kinds.items()):
            print(f"fuzz problem: {times:4} x {code} {path} ({kind}, token {token})")

        health = await _health(stack)
        nats_after = stack.nats_connection()
        gauge = await _streams_closed(stack)
        game = await _play_short_game(stack)
    # Stopped now: its whole log, shutdown included, is in.
    troubles = troubled_lines([*stack.log_lines(), *stack.stdout_lines()])
    race_errors = logged_errors(stack.log_lines(), tally.deadline_races)
    stdout = stack.stdout_lines()
    for line in troubles[:10]:
        print("fuzz log:", line[:400])
    print(f"fuzz: health {health}; NATS connection {nats_before} -> {nats_after}; "
          f"open streams {gauge}; game afterwards: {game}; {len(stdout)} lines on stdout after "
          f"the banner; exit code {stack.launched.process.returncode}")

    assert tally.sent == len(requests)
    assert {rpc.path.rsplit("/", 2)[1] for rpc in rpcs} >= {
        "stammtisch.v1.LobbyService", "stammtisch.v1.EngineService", "stammtisch.v1.ArbiterService",
        "stammtisch.v1.ScoringService", "stammtisch.v1.TournamentService", "stammtisch.v1.ClubsService",
        "grpc.health.v1.Health"}
    assert {"/stammtisch.v1.EngineService/Play", "/stammtisch.v1.ArbiterService/Play"} <= {
        rpc.path for rpc in rpcs if rpc.client_streaming}
    # Every check at once, each with the finding of issue 10 it guards.
    failed = [message for broken, message in (
        (tally.problems, f"{len(tally.problems)} answers no client may get (INTERNAL/UNKNOWN: findings "
                         f"2-4; UNAUTHENTICATED from Login/health: 7); first: {tally.problems[:5]}"),
        (race_errors, f"{len(race_errors)} server errors logged for calls counted as lost to their "
                      f"own deadline (a real INTERNAL, not grpc's race); first: {race_errors[:3]}"),
        (troubles, f"{len(troubles)} tracebacks/errors in the server log (ExecuteBatchError: finding 6); "
                   f"first: {troubles[:3]}"),
        (stdout, f"{len(stdout)} lines bypassed the log on stdout (finding 5); first: {stdout[:3]}"),
        (set(health.values()) != {"SERVING"}, f"not every service is SERVING (finding 2): {health}"),
        (nats_after != nats_before, f"the stack's NATS connection {nats_before} was dropped, now "
                                    f"{nats_after} (finding 2)"),
        (any(gauge.values()), f"streams still counted open with no client left (finding 6): {gauge}"),
        (game != "over", f"no game plays afterwards: {game}"),
        (stack.launched.process.returncode != 0, "the stack did not stop cleanly after the fuzz"),
    ) if broken]
    assert not failed, "\n".join(failed)


def test_only_a_write_that_lost_to_its_own_deadline_counts_as_grpcs_race() -> None:
    """The exception for grpc's client-side race stays narrow: its wording, its timing, and a
    clean server log for the call."""
    def failed(details: str) -> grpc.aio.AioRpcError:
        return grpc.aio.AioRpcError(grpc.StatusCode.INTERNAL, grpc.aio.Metadata(),
                                    grpc.aio.Metadata(), details)
    assert lost_to_its_deadline(failed(CORE_SEND_FAILED), elapsed=0.002, timeout=0.001)
    assert not lost_to_its_deadline(failed(CORE_SEND_FAILED), elapsed=0.0005, timeout=0.001)
    assert not lost_to_its_deadline(failed("internal error; see server logs"), 0.002, 0.001)
    rpc = Rpc("engine", "/stammtisch.v1.EngineService/Play", engine_pb2.PlayRequest, engine_pb2.PlayResponse,
              streaming=True, client_streaming=True)
    race = Request("deadline", rpc, engine_pb2.PlayRequest(), "valid", timeout=0.001, index=7)
    log = ['{"event": "rpc", "code": "DEADLINE_EXCEEDED", "request_id": "fuzz-7", "level": "warning"}',
           '{"event": "rpc", "code": "INTERNAL", "request_id": "fuzz-8", "level": "error"}', "not json"]
    assert logged_errors(log, [race]) == []
    crashed = '{"event": "rpc_crashed", "request_id": "fuzz-7", "level": "error"}'
    assert logged_errors([*log, crashed], [race]) == [crashed]
