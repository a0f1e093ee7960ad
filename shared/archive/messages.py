"""Archives as the HistoryService sends them, and back: the server and `stammtisch verify`
(which reads a saved GetReplay answer) share this one mapping."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from google.protobuf.json_format import MessageToJson, Parse

from shared.api.stammtisch.v1 import common_pb2, history_pb2
from shared.archive.document import ArchivedCommit, GameArchive
from shared.games.catalog import CATALOGUE
from shared.rpc.times import timestamp, unix_seconds

SERVER = -1


def summary_proto(summary: dict[str, Any], seat: int = SERVER) -> history_pb2.GameSummary:
    """A game's summary (see :func:`summary_of`) for the player of ``seat``."""
    return history_pb2.GameSummary(
        table_id=summary["table_id"], game_no=summary["game_no"], game=summary["game"],
        seats=[history_pb2.HistorySeat(seat=s["seat"], player_id=s.get("player_id") or "",
                                       name=s.get("name") or "", bot=s.get("bot") or "")
               for s in summary["seats"]],
        seat=seat, winners=summary.get("winners", []), scores=summary.get("scores", []),
        ended_at=timestamp(summary["ended_at"]))


def summary_of(archive: GameArchive) -> dict[str, Any]:
    """The small part of an archive a history list shows."""
    result = archive.result
    return {"table_id": archive.table_id, "game_no": archive.game_no, "game": archive.game,
            "seats": archive.seats, "winners": list(result.get("winners", [])),
            "scores": [int(score) for score in result.get("scores", [])],
            "ended_at": archive.ended_at}


#: The most bytes one GetReplay answer carries (unless one commit alone is larger): far under
#: gRPC's default 4 MB receive limit, so any client gets every page with its default settings.
REPLAY_PAGE_BYTES = 1024 * 1024
#: A repeated field's key and length prefix around each commit (1 + at most 5 bytes).
_FRAMING_BYTES = 6


def _commit_proto(c: ArchivedCommit) -> history_pb2.ReplayCommit:
    return history_pb2.ReplayCommit(
        seq=c.seq, committed_at=timestamp(c.at), actor=SERVER if c.actor is None else c.actor,
        action_json="" if c.action is None else json.dumps(c.action),
        events=[common_pb2.Event(type=str(e.get("type", "")), data_json=json.dumps(e)) for e in c.events],
        state_json=json.dumps(c.state), bots=c.bots)


def replay_page(archive: GameArchive, after_seq: int = 0,
                page_bytes: int = REPLAY_PAGE_BYTES) -> history_pb2.GetReplayResponse:
    """One GetReplay answer: the game's header and its commits after ``after_seq``, as many as fit
    in ``page_bytes`` (the whole answer; at least one commit), ``complete`` on the last page."""
    page = history_pb2.GetReplayResponse(
        summary=summary_proto(summary_of(archive)), options_json=json.dumps(archive.options),
        seed=str(archive.seed), salt=archive.salt, commitment=archive.commitment,
        seat_count=archive.seat_count, complete=True, next_after_seq=after_seq)
    used = page.ByteSize() + 2 * _FRAMING_BYTES  # complete and next_after_seq, set last
    for commit in archive.commits:
        if commit.seq <= after_seq:
            continue
        proto = _commit_proto(commit)
        used += proto.ByteSize() + _FRAMING_BYTES
        if page.commits and used > page_bytes:
            page.complete = False
            break
        page.commits.append(proto)
        page.next_after_seq = commit.seq
    return page


async def whole_replay(get_page: Callable[[history_pb2.GetReplayRequest],
                                          Awaitable[history_pb2.GetReplayResponse]],
                       table_id: str, game_no: int = 0, page_bytes: int = 0) -> history_pb2.GetReplayResponse:
    """A finished game put together from its GetReplay pages (``get_page`` makes the call): the
    first page with every later page's commits, ``complete`` set."""
    whole = await get_page(history_pb2.GetReplayRequest(table_id=table_id, game_no=game_no,
                                                        page_bytes=page_bytes))
    while not whole.complete:
        page = await get_page(history_pb2.GetReplayRequest(
            table_id=table_id, game_no=whole.summary.game_no, after_seq=whole.next_after_seq,
            page_bytes=page_bytes))
        if not page.commits and not page.complete:
            raise ValueError("a replay page without commits that is not the last")
        whole.commits.extend(page.commits)
        whole.complete, whole.next_after_seq = page.complete, page.next_after_seq
    return whole


def archive_of(reply: history_pb2.GetReplayResponse) -> GameArchive:
    """The archive a GetReplay answer carries; ValueError when a field does not decode."""
    summary = reply.summary
    seats = [{"seat": s.seat, "player_id": s.player_id, "name": s.name, "bot": s.bot or None}
             for s in summary.seats]
    commits = [ArchivedCommit(
        seq=c.seq, at=unix_seconds(c.committed_at), actor=None if c.actor == SERVER else c.actor,
        action=json.loads(c.action_json) if c.action_json else None,
        events=[json.loads(e.data_json) for e in c.events], state=json.loads(c.state_json),
        bots=dict(c.bots)) for c in reply.commits]
    game = _game_of(summary.game)
    return GameArchive(summary.table_id, game, summary.game_no, reply.seat_count,
                       seats, json.loads(reply.options_json or "{}"), int(reply.seed), reply.salt,
                       reply.commitment, commits)


def _game_of(name: str) -> str:
    """The catalogue name a replay's summary gives; a file saved before games were named by
    name carries the old enum's name ("GAME_" and the name in capitals), read as that game's name."""
    for game in CATALOGUE:
        if name in (game, "GAME_" + game.upper().replace("-", "_")):
            return game
    raise ValueError(f"the replay names no known game ({name!r})")


def replay_to_json(reply: history_pb2.GetReplayResponse) -> str:
    """A GetReplay answer as the file `stammtisch replay --table` saves and `verify` reads."""
    return MessageToJson(reply)


def replay_from_json(text: str) -> history_pb2.GetReplayResponse:
    """Inverse of :func:`replay_to_json` (protobuf's JSON mapping); ParseError when it is not one."""
    return Parse(text, history_pb2.GetReplayResponse())
