"""Archived games encode with orjson and still read what the json module wrote before."""

from __future__ import annotations

import dataclasses
import json
import zlib

from shared.archive.document import ArchivedCommit, GameArchive
from shared.games.registry import engine_class


def _archive() -> GameArchive:
    game = engine_class("wie-waldi").new(4, seed=3)
    commits = [ArchivedCommit(seq, 1000.5 + seq, seq % 4, {"type": "play", "card": "E7"},
                              [{"type": "played", "seat": seq % 4}], game.to_dict(), {"1": "easy"})
               for seq in range(1, 40)]
    commits[0].state["by_seat"] = {0: "int keys become strings, as json wrote them"}
    return GameArchive("t1", "wie-waldi", 1, 4, [{"seat": 0, "player_id": "p0", "name": "Jörg",
                                                  "bot": None}], {"rounds": 2}, 3, "ab", "cd", commits)


def test_an_archive_round_trips() -> None:
    archive = _archive()
    back = GameArchive.decode(archive.encode())
    assert back.commits[0].state["by_seat"] == {"0": "int keys become strings, as json wrote them"}
    back.commits[0].state["by_seat"] = archive.commits[0].state["by_seat"]
    assert back == archive


def test_an_archive_the_json_module_wrote_reads_the_same() -> None:
    archive = _archive()
    written_before = zlib.compress(json.dumps(dataclasses.asdict(archive), separators=(",", ":")).encode(), 6)
    assert GameArchive.decode(written_before) == GameArchive.decode(archive.encode())
