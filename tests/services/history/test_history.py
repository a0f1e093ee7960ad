"""The archive of finished games, replays, history pages and provably fair deals, end to end.

Real Redis, NATS/JetStream and gRPC: games are played through the SDK with server bots, the
archiver consumes the real results stream, and replays come back over HistoryService.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging

import grpc
import pytest

from services.history.consumer import Archiver
from services.history.store import ArchiveStore
from shared.api.stammtisch.v1 import history_pb2, history_pb2_grpc
from shared.archive.document import ArchivedCommit, GameArchive
from shared.archive.fairness import commitment
from shared.archive.messages import (
    REPLAY_PAGE_BYTES,
    archive_of,
    replay_from_json,
    replay_to_json,
    whole_replay,
)
from shared.archive.verify import verify
from shared.config import Settings
from shared.games.catalog import CATALOGUE
from shared.infra.runtime import Runtime
from shared.sdk.client import Endpoints, StammtischClient
from shared.tables.records import CommitRecord
from tests.support.stack import bot_table, eventually, finish_game, quick_stack

pytestmark = pytest.mark.integration


async def _replay_when_archived(client: StammtischClient, table_id: str, game_no: int = 1):  # type: ignore[no-untyped-def]
    async def probe():  # type: ignore[no-untyped-def]
        try:
            return await client.replay(table_id, game_no)
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            return None
    return await eventually(probe, 20.0, "the game to be archived")


async def test_a_finished_game_is_archived_with_every_card_and_its_deal_verifies(
        settings: Settings, runtime: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with quick_stack(settings) as ends:
        me, stranger = StammtischClient(ends), StammtischClient(ends)
        await me.login("me")
        await stranger.login("stranger")
        table_id = await bot_table(me, "willi", 3, turn_seconds=0)

        # Live: the game's start commits to the seed, and nothing reveals it or another hand.
        first = await me.view(table_id)
        head = await runtime.redis.hget(runtime.table_key(table_id, "head"), "rec")
        meta = CommitRecord.decode(head).meta
        async with contextlib.aclosing(me.updates(table_id, 0)) as updates:
            started = (await anext(updates)).events[0]
        assert started["type"] == "game_started"
        assert started["commitment"] == commitment(meta.seed, meta.salt)
        for who in (me, stranger):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await who.replay(table_id, 1)
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert (await who.my_games()).games == []
        shown = json.dumps([first.view, first.events]) + str(await me.get_table(table_id))
        assert str(meta.seed) not in shown and meta.salt not in shown
        # Only the own hand is in the view: the others' cards (seat 1's, say) are nowhere in it.
        others = CommitRecord.decode(head).state["hands"][1]
        assert first.view["hands"][1:] == [None, None, None]
        assert not set(others) & set(first.view["hands"][0])

        await finish_game([me], table_id, "willi")
        assert str(meta.seed) not in caplog.text and meta.salt not in caplog.text
        reply = await _replay_when_archived(stranger, table_id)
        archive = archive_of(reply)
        assert archive.seed == meta.seed and archive.salt == meta.salt
        assert archive.commitment == started["commitment"]
        assert archive.seats[0]["player_id"] == me.player_id
        assert [s["bot"] for s in archive.seats[1:]] == ["heuristic", "heuristic"]
        assert archive.commits[-1].events[-1]["type"] == "game_over"
        assert verify(archive) == []
        assert verify(archive_of(replay_from_json(replay_to_json(reply)))) == []

        mine = await me.my_games()
        assert [(g.table_id, g.game_no, g.seat) for g in mine.games] == [(table_id, 1, 0)]
        assert (await stranger.my_games()).games == []
        newest = await me.replay(table_id, 0)
        assert newest.seed == reply.seed
        await me.close()
        await stranger.close()


def _tampered(archive: GameArchive, change) -> GameArchive:  # type: ignore[no-untyped-def]
    copied = copy.deepcopy(archive)
    change(copied)
    return copied


async def test_verify_catches_a_changed_card_seed_salt_or_move(settings: Settings) -> None:
    async with quick_stack(settings) as ends:
        me = StammtischClient(ends)
        await me.login("me")
        table_id = await bot_table(me, "willi", 3, turn_seconds=0)
        await finish_game([me], table_id, "willi")
        archive = archive_of(await _replay_when_archived(me, table_id))
        await me.close()
    assert verify(archive) == []

    def swap_two_cards(a: GameArchive) -> None:
        hands = a.commits[0].state["hands"]
        hands[0][0], hands[1][0] = hands[1][0], hands[0][0]

    def other_seed(a: GameArchive) -> None:
        a.seed += 1

    def other_salt(a: GameArchive) -> None:
        a.salt = ("0" if a.salt[0] != "0" else "1") + a.salt[1:]

    def other_move(a: GameArchive) -> None:
        mover = next(c for c in a.commits if c.actor == 0 and c.action and c.action.get("type") == "play")
        state_before = a.commits[a.commits.index(mover) - 1].state
        others = [card for card in state_before["hands"][0] if card != mover.action["card"]]
        mover.action = {**mover.action, "card": others[0]}

    def later_card_in_a_state(a: GameArchive) -> None:
        middle = a.commits[len(a.commits) // 2]
        hand = next(h for h in middle.state["hands"] if h)
        hand[0] = "X" + str(hand[0])

    for change in (swap_two_cards, other_seed, other_salt, other_move, later_card_in_a_state):
        problems = verify(_tampered(archive, change))
        assert problems, change.__name__


async def test_a_game_is_archived_once_however_often_its_result_comes(
        settings: Settings, runtime: Runtime) -> None:
    async with quick_stack(settings) as ends:
        me = StammtischClient(ends)
        await me.login("me")
        table_id = await bot_table(me, "willi", 3, turn_seconds=0)
        await finish_game([me], table_id, "willi")
        await _replay_when_archived(me, table_id)
        store = ArchiveStore(runtime)
        before = await runtime.js.stream_info(store.stream)
        _archive, seq = await store.get(table_id, 1) or (None, 0)

        # The relay re-publishes the result after the dedup window (a new msg id, as if two
        # minutes had passed): the archiver gets it again and stores nothing new.
        final = (await me.view(table_id)).seq
        payload = {"table_id": table_id, "seq": final, "game": "willi", "game_no": 1,
                   "players": [], "bots": {}, "at": 0, "event": {"type": "game_over"}}
        await runtime.js.publish(runtime.subject("results", "willi", "game"), json.dumps(payload).encode(),
                                 headers={"Nats-Msg-Id": f"{table_id}:{final}:again"})
        assert await Archiver(runtime, store).archive_game(table_id, 1, final) is False

        async def consumed():  # type: ignore[no-untyped-def]
            info = await runtime.js.consumer_info(
                f"{settings.key_prefix.upper()}_RESULTS", "history-archive")
            return info.num_pending == 0 and info.num_ack_pending == 0
        await eventually(consumed, 10.0, "the archiver to take the repeated result")
        after = await runtime.js.stream_info(store.stream)
        assert after.state.last_seq == before.state.last_seq and after.state.messages == 1
        assert (await store.get(table_id, 1) or (None, 0))[1] == seq
        assert len((await me.my_games()).games) == 1
        await me.close()


def _archive(table_id: str, player_id: str, ended_at: float) -> GameArchive:
    salt = "ab" * 32
    over = {"type": "game_over", "winners": [0], "scores": [3, 1, 0]}
    end = ArchivedCommit(2, ended_at, None, None, [over], {})
    start = ArchivedCommit(1, ended_at - 60, None, None,
                           [{"type": "game_started", "commitment": commitment(5, salt)}], {})
    seats = [{"seat": 0, "player_id": player_id, "name": "me", "bot": None}]
    return GameArchive(table_id, "willi", 1, 3, seats, {}, 5, salt, commitment(5, salt), [start, end])


async def test_my_games_come_in_pages_newest_first(settings: Settings, runtime: Runtime) -> None:
    async with quick_stack(settings) as ends:
        me = StammtischClient(ends)
        await me.login("me")
        store = ArchiveStore(runtime)
        for index in range(5):
            assert await store.put(_archive(f"paged-{index}", me.player_id, 1_700_000_000 + index))
        seen, token, pages = [], "", 0
        while True:
            page = await me.my_games(page_size=2, page_token=token)
            seen += [game.table_id for game in page.games]
            pages += 1
            token = page.next_page_token
            if not token:
                break
        assert seen == [f"paged-{index}" for index in reversed(range(5))]
        assert pages == 3
        for bad in ({"page_size": 101}, {"page_size": -1}, {"page_token": "not-a-token"}):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await me.my_games(**bad)  # type: ignore[arg-type]
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        for table_id, game_no, code in (("nowhere", 1, grpc.StatusCode.NOT_FOUND),
                                        ("bad id!", 1, grpc.StatusCode.INVALID_ARGUMENT),
                                        ("paged-1", -1, grpc.StatusCode.INVALID_ARGUMENT)):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await me.replay(table_id, game_no)
            assert refused.value.code() == code
        await me.close()


@pytest.mark.parametrize("game", sorted(CATALOGUE))
async def test_every_game_with_server_bots_verifies_from_its_seed(settings: Settings, game: str) -> None:
    async with quick_stack(settings) as ends:
        me = StammtischClient(ends)
        await me.login("me")
        table_id = await bot_table(me, game, CATALOGUE[game].min_seats, turn_seconds=0)
        await finish_game([me], table_id, game)
        archive = archive_of(await _replay_when_archived(me, table_id))
        await me.close()
    assert archive.game == game and verify(archive) == []
    assert any(commit.bots for commit in archive.commits)  # a server bot's choices were recomputed


def _default_history(ends: Endpoints) -> tuple[grpc.aio.Channel, history_pb2_grpc.HistoryServiceStub]:
    """A channel to the lobby with gRPC's default options (a 4 MB receive limit), as any app has."""
    channel = grpc.aio.insecure_channel(ends.lobby)
    return channel, history_pb2_grpc.HistoryServiceStub(channel)


async def test_a_replay_larger_than_grpcs_default_4_mb_comes_in_pages_under_the_bound(
        settings: Settings, runtime: Runtime) -> None:
    big = _archive("big-game", "0" * 32, 1_700_000_000)
    padding = "x" * 3000  # compresses to almost nothing in the archive, 3 KB per commit in the answer
    filler = [ArchivedCommit(seq, 1_700_000_000, 0, {"type": "pass"}, [], {"pad": padding})
              for seq in range(2, 1800)]
    big.commits = [big.commits[0], *filler, big.commits[1]]
    big.commits[-1].seq = 1800
    async with quick_stack(settings) as ends:
        assert await ArchiveStore(runtime).put(big)
        me = StammtischClient(ends)
        await me.login("me")
        channel, history = _default_history(ends)
        pages: list[tuple[int, bool]] = []  # each page's size and complete, as it came

        async def page(request: history_pb2.GetReplayRequest) -> history_pb2.GetReplayResponse:
            answer = await history.GetReplay(request, metadata=me.auth)
            pages.append((answer.ByteSize(), answer.complete))
            return answer

        reply = await whole_replay(page, "big-game", 1)
        assert archive_of(await me.replay("big-game", 1)) == archive_of(reply)
        await channel.close()
        await me.close()
    assert reply.ByteSize() > 4 * 1024 * 1024 and len(reply.commits) == 1800 and reply.complete
    assert len(pages) >= 5 and all(size <= REPLAY_PAGE_BYTES for size, _ in pages), pages
    assert [complete for _, complete in pages] == [False] * (len(pages) - 1) + [True]
    assert archive_of(reply).commits == big.commits


async def test_a_real_game_in_small_pages_is_the_archive_and_verifies(
        settings: Settings, runtime: Runtime) -> None:
    async with quick_stack(settings) as ends:
        me = StammtischClient(ends)
        await me.login("me")
        table_id = await bot_table(me, "willi", 3, turn_seconds=0)
        await finish_game([me], table_id, "willi")
        whole = await _replay_when_archived(me, table_id)
        channel, history = _default_history(ends)
        sizes: list[int] = []

        async def page(request: history_pb2.GetReplayRequest) -> history_pb2.GetReplayResponse:
            answer = await history.GetReplay(request, metadata=me.auth)
            sizes.append(answer.ByteSize())
            return answer

        paged = await whole_replay(page, table_id, 0, page_bytes=32 * 1024)
        stored = await ArchiveStore(runtime).get(table_id, 1)
        for bad in ({"after_seq": -1}, {"page_bytes": -1}):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await history.GetReplay(history_pb2.GetReplayRequest(table_id=table_id, **bad),
                                        metadata=me.auth)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        await channel.close()
        await me.close()
    assert stored is not None
    assert len(sizes) > 3 and max(sizes) <= 32 * 1024
    assert archive_of(paged) == archive_of(whole) == stored[0]
    assert verify(archive_of(paged)) == []
