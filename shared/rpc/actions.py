"""Actions between the API and the rules: ``Action`` is the action's ``type`` plus its other
fields as one JSON object (``fields_json``); the rules' action is that object with its type.

The engine checks the fields (names, types, values) as it checks every action; this
module only refuses what is no action at all: malformed or oversized JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from shared.api.stammtisch.v1 import common_pb2
from shared.games.errors import ErrorCode, RuleError
from shared.rpc.errors import invalid

#: The longest fields_json taken (characters): far above any action's, far below a message's limit.
MAX_FIELDS_JSON = 4096


def action_of(action: common_pb2.Action) -> dict[str, Any]:
    """The rules' action dict of an Action (parsed once, with orjson: this is per action).

    INVALID_ARGUMENT for fields_json that is no JSON object, too long or naming a type;
    a missing type is the rules' INVALID_ACTION, as any action the rules cannot take.
    """
    if not action.type:
        raise RuleError(ErrorCode.INVALID_ACTION, "action.type is required")
    text = action.fields_json
    if not text:
        return {"type": action.type}
    if len(text) > MAX_FIELDS_JSON:
        raise invalid(f"action.fields_json must be at most {MAX_FIELDS_JSON} characters")
    try:
        fields = orjson.loads(text)
    except orjson.JSONDecodeError as err:
        raise invalid(f"action.fields_json is not JSON: {err}") from err
    if type(fields) is not dict:
        raise invalid("action.fields_json must be a JSON object of the action's fields")
    if "type" in fields:
        raise invalid("action.fields_json must not name the type (it is action.type)")
    return {"type": action.type, **fields}


def action_proto(action: Mapping[str, Any]) -> common_pb2.Action:
    """The Action of a rules action dict (its ``type`` and its other fields as JSON)."""
    fields = {name: value for name, value in action.items() if name != "type"}
    return common_pb2.Action(type=str(action["type"]),
                             fields_json=orjson.dumps(fields).decode() if fields else "")
