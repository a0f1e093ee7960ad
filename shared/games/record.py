"""Engine state as JSON data: one deep-copy helper and a dataclass base that stores itself.

Services store a game's state after every action, so ``to_dict`` must be a
cheap deep copy that shares nothing with the live state, and ``from_dict``
must accept every document stored before (fields that were dropped are listed
in ``retired`` and ignored on load).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, fields
from enum import Enum
from typing import Any, ClassVar, Self

import orjson

#: Types copied as they are (immutable JSON values).
_PLAIN = frozenset({str, int, float, bool, type(None)})
#: Item types of lists copied in one go.
_LEAF_LISTS = frozenset({str, int})


def json_copy(value: Any) -> Any:
    """A deep copy as JSON data that shares nothing with ``value``.

    Tuples become lists, enum members their values and records their
    :meth:`Record.to_dict`. Hand-written because ``copy.deepcopy`` and
    ``dataclasses.asdict`` are far slower (services store the state after every
    action): plain values are not even passed to a call, and a list whose first
    item is a string or an int is taken to hold only such items, as every list
    of the engines' states does.
    """
    kind = type(value)
    if kind is list or kind is tuple:
        if not value:
            return []
        if type(value[0]) in _LEAF_LISTS:
            return list(value)
        # Lists of lists of cards (piles, hands per seat) are copied without a call per list.
        return [item if type(item) in _PLAIN else
                list(item) if type(item) is list and (not item or type(item[0]) in _LEAF_LISTS) else
                json_copy(item) for item in value]
    if kind is dict:
        copied = value.copy()
        for key, item in value.items():
            kind = type(item)
            if kind is list:  # the common case, without a call: a list of cards or seats
                copied[key] = list(item) if item and type(item[0]) in _LEAF_LISTS else json_copy(item)
            elif kind not in _PLAIN:
                copied[key] = json_copy(item)
        return copied
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, Enum):
        return value.value
    return value


_FIELD_NAMES: dict[type, tuple[frozenset[str], frozenset[str]]] = {}


def _field_names(cls: type) -> tuple[frozenset[str], frozenset[str]]:
    """(all field names, the ones without a default) of a dataclass, looked up once."""
    if cls not in _FIELD_NAMES:
        every = fields(cls)
        required = {f.name for f in every if f.default is MISSING and f.default_factory is MISSING}
        _FIELD_NAMES[cls] = frozenset(f.name for f in every), frozenset(required)
    return _FIELD_NAMES[cls]


class Record:
    """Base of the engines' state dataclasses: stored as a dict of its fields.

    Fields hold JSON data, nested records, tuples or enum members; ``restorers``
    turns the stored form of the last three back into what the engine uses.
    """

    #: Field name -> how to rebuild the field from its (already copied) JSON form.
    restorers: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}
    #: Fields older stored documents may have that the record no longer keeps.
    retired: ClassVar[frozenset[str]] = frozenset()

    def stored(self) -> dict[str, Any]:
        """The fields as stored, one level deep: nested values are the live ones (the copy and
        the serialiser go into them). A record stored in another shape overrides this."""
        return vars(self)

    def to_dict(self) -> dict[str, Any]:
        """A deep, JSON-compatible copy of every field."""
        return json_copy(self.stored())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from :meth:`to_dict` output, sharing nothing with ``data``.

        KeyError when the document has other fields than the record (besides retired ones).
        """
        return cls.restore(json_copy(dict(data)))

    @classmethod
    def restore(cls, values: dict[str, Any]) -> Self:
        """Rebuild from JSON data that the caller hands over (it is not copied again)."""
        names, required = _field_names(cls)
        for key in cls.retired & values.keys():
            del values[key]
        unknown, missing = values.keys() - names, required - values.keys()
        if unknown or missing:
            raise KeyError(f"{cls.__name__} fields differ: {sorted(unknown | missing)}")
        for name, rebuild in cls.restorers.items():
            if name in values:
                values[name] = rebuild(values[name])
        return cls(**values)

    def copy(self) -> Self:
        """An independent copy."""
        return self.restore(self.to_dict())


def _stored_form(value: Any) -> Any:
    """What orjson writes for a record (it asks only for types it does not know itself)."""
    if isinstance(value, Record):
        return value.stored()
    raise TypeError(f"{type(value).__name__} is not JSON data")


#: Records through the hook above; int keys as strings, as the json module writes them.
_RECORD_JSON = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_NON_STR_KEYS


def dumps(value: Any) -> bytes:
    """Compact JSON of plain data, as the json module would write it (int keys become strings):
    what the services store and send (views, events, log entries)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def record_json(record: Record) -> bytes:
    """Compact JSON of ``record``, the same bytes as of its :meth:`~Record.to_dict`, without
    the copy (a commit stores the state this way: it is several times faster)."""
    return orjson.dumps(record, default=_stored_form, option=_RECORD_JSON)


def records(kind: type[Record]) -> Callable[[list[dict[str, Any]]], list[Any]]:
    """A restorer for a list of nested records of ``kind``."""
    return lambda items: [kind.restore(item) for item in items]
