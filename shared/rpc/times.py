"""Unix times to and from protobuf Timestamps, one way for every service and client."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

_NANOS = 1_000_000_000


def timestamp(at: float) -> Timestamp:
    """A unix time as a protobuf Timestamp (to the nanosecond)."""
    stamp = Timestamp()
    stamp.FromNanoseconds(int(at * 1e9))
    return stamp


def unix_seconds(stamp: Timestamp) -> float:
    """A Timestamp as unix seconds: what ``ToNanoseconds() / 1e9`` gives, read from the fields
    (ToNanoseconds is slow Python code, and a client reads every update's deadlines)."""
    return (stamp.seconds * _NANOS + stamp.nanos) / 1e9
