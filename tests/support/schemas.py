"""The JSON Schemas clients code against: the table's own events and each game's from its package."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from shared.games.catalog import entry

TABLE_SCHEMAS = Path(__file__).resolve().parents[2] / "proto" / "schemas"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A schema by name: "table.events" from proto/schemas, "<game>.<kind>" from the game's package."""
    if name.startswith("table."):
        loaded: dict[str, Any] = json.loads((TABLE_SCHEMAS / f"{name}.schema.json").read_text())
        return loaded
    game, kind = name.rsplit(".", 1)
    return entry(game).schema(kind)
