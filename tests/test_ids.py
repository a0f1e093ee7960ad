"""Id shapes, and the last guard: no request can make a Redis key or NATS subject of any shape."""

from __future__ import annotations

from typing import Any

import pytest

from shared.config import Settings
from shared.ids import IdError, check_name_part, check_player_id, check_table_id, new_player_id
from shared.infra.runtime import Runtime

ODD_PARTS = ["", " ", "a b", "a\tb", "a\r\nb", "a\n", "a\x00", "a\x7f", "a\x85", "a\u2028b", "a.b", "*", ">",
             "a*", "a>", "x" * 129, "x" * 5000]


def _runtime() -> Runtime:
    nothing: Any = None  # key() and subject() need only the settings
    return Runtime(Settings(key_prefix="st"), nothing, nothing, nothing, nothing)


def test_new_player_ids_have_the_one_shape_and_differ() -> None:
    ids = {new_player_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(check_player_id(player_id) == player_id and len(player_id) == 32 for player_id in ids)


@pytest.mark.parametrize("odd", ["", "p1", "x" * 5000, new_player_id().upper(), new_player_id() + "\n",
                                 new_player_id()[:31] + " ", new_player_id()[:31] + "g"])
def test_anything_else_is_not_a_player_id(odd: str) -> None:
    with pytest.raises(IdError, match="player_id"):
        check_player_id(odd)


@pytest.mark.parametrize("odd", ["", "a b", "t\r\n", "x" * 65, "a.b", "tä", "*"])
def test_table_ids_are_letters_digits_dash_and_underscore(odd: str) -> None:
    assert check_table_id("Table_1-a") == "Table_1-a"
    with pytest.raises(IdError, match="table_id"):
        check_table_id(odd)


@pytest.mark.parametrize("odd", ODD_PARTS)
def test_keys_and_subjects_refuse_odd_parts(odd: str) -> None:
    runtime = _runtime()
    for make in (runtime.key, runtime.subject):
        with pytest.raises(IdError):
            make("lobby", odd)
    with pytest.raises(IdError):
        check_name_part(odd)


def test_keys_and_subjects_of_well_formed_parts() -> None:
    runtime = _runtime()
    player = new_player_id()
    assert runtime.key("table", "{t1}", "head") == "st:table:{t1}:head"
    assert runtime.key("lobby", "{queue:willi:4}", "order") == "st:lobby:{queue:willi:4}:order"
    assert runtime.subject("lobby", "player", player) == f"st.lobby.player.{player}"
    assert runtime.subject_pattern("results", "*", "game") == "st.results.*.game"
    for odd in ("a*", "a.b", ""):
        with pytest.raises(IdError):
            runtime.subject_pattern("results", odd)
