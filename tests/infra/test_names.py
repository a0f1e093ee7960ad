"""Redis keys are made once per process and stay exactly what their parts say."""

from __future__ import annotations

import dataclasses

import pytest

from shared.config import Settings
from shared.ids import IdError
from shared.infra.runtime import Runtime


def _runtime(shards: int = 1) -> Runtime:
    settings = dataclasses.replace(Settings(), key_prefix="t", redis_shards=shards)
    return Runtime(settings, None, None, None, None)  # type: ignore[arg-type]


def test_a_table_key_is_its_shard_tag_and_parts_however_often_it_is_made() -> None:
    runtime = _runtime(shards=16)
    shard = runtime.shards.tag(runtime.shards.of("abc"))
    assert runtime.table_key("abc", "head") == f"t:table:{shard}:abc:head"
    assert runtime.table_key("abc", "head") == f"t:table:{shard}:abc:head"
    assert runtime.key("table", "abc", "head") == "t:table:abc:head"  # not the table's key
    assert runtime.table_key("abc", "head") == f"t:table:{shard}:abc:head"


def test_a_bad_part_is_refused_every_time() -> None:
    runtime = _runtime()
    for _ in range(2):
        with pytest.raises(IdError):
            runtime.table_key("a b", "head")
        with pytest.raises(IdError):
            runtime.key("x", "")


def test_the_names_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shared.infra.runtime.NAMES_KEPT", 10)
    runtime = _runtime()
    keys = [runtime.table_key(f"table{index}", "head") for index in range(25)]
    assert len(runtime._names) <= 10
    assert keys == [runtime.table_key(f"table{index}", "head") for index in range(25)]
