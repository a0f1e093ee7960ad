"""Unix times and protobuf Timestamps convert one way everywhere, to the last bit as before."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from shared.rpc.times import timestamp, unix_seconds


@given(st.floats(min_value=0, max_value=4_102_444_800, allow_nan=False))
def test_unix_seconds_reads_what_to_nanoseconds_gave(at: float) -> None:
    stamp = timestamp(at)
    assert stamp.ToNanoseconds() == int(at * 1e9)
    assert unix_seconds(stamp) == stamp.ToNanoseconds() / 1e9
    assert abs(unix_seconds(stamp) - at) < 1e-6
