"""The shapes of identifiers that become parts of Redis keys and NATS subjects.

A request string that reaches a key or a subject unchecked can do harm: a
space or CR/LF breaks a NATS protocol line, a '.' or '*' changes which
subjects match, and a few thousand characters exceed NATS's control line so
that the server drops the process's connection. So every id has one fixed
shape, checked where it enters (the token's subject, a request's table id),
and :func:`check_name_part` is the last guard in ``Runtime.key/subject``.

The errors here know nothing of gRPC: :class:`IdError` is a neutral
:class:`~shared.errors.BadInput`, which the interceptor turns into INVALID_ARGUMENT.
"""

from __future__ import annotations

import re
import uuid

from shared.errors import BadInput

#: A player id as the lobby makes it: 32 lowercase hex digits (a uuid4).
_PLAYER_ID = re.compile(r"[0-9a-f]{32}")
_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_NAME_PART = 128
#: What a key or subject part may never contain: white space, NATS's token separator and
#: wildcards, control characters (C0, DEL, C1).
_FORBIDDEN = re.compile(r"[\s.*>\x00-\x1f\x7f-\x9f]")


class IdError(BadInput, ValueError):
    """An identifier from a request does not have its shape (the caller's mistake)."""


def new_player_id() -> str:
    """A fresh player id in the one shape :func:`check_player_id` accepts."""
    return uuid.uuid4().hex


def check_player_id(player_id: str) -> str:
    """The id when it has the shape of :func:`new_player_id`, else IdError."""
    if not isinstance(player_id, str) or not _PLAYER_ID.fullmatch(player_id):
        raise IdError("player_id must be 32 lowercase hex digits")
    return player_id


def check_table_id(table_id: str) -> str:
    """A well-formed table id, else IdError."""
    if not _TABLE_ID.fullmatch(table_id):
        raise IdError("table_id is required: 1 to 64 letters, digits, '-' or '_'")
    return table_id


def check_name_part(part: str) -> str:
    """One part of a Redis key or NATS subject: 1 to 128 characters, none of them white
    space, '.', '*', '>' or a control character; else IdError."""
    if not 0 < len(part) <= MAX_NAME_PART or _FORBIDDEN.search(part):
        shown = part[:40] + ("..." if len(part) > 40 else "")
        raise IdError(f"{shown!r} cannot be part of a name: 1 to {MAX_NAME_PART} characters, "
                      "no white space, '.', '*', '>' or control characters")
    return part
