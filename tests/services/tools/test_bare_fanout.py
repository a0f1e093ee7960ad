"""The bench's bare gRPC fan-out: every message reaches each stream of its group, and the
server's CPU is measured in a process of its own."""

from __future__ import annotations

from services.tools.perf.bare import grpc_fanout_cpu
from services.tools.perf.bench import cpu_seconds


async def test_the_fan_out_answers_every_seat_and_measures_its_server() -> None:
    rate, cpu = await grpc_fanout_cpu(groups=2, seats=3, seconds=0.5, cpu_of=cpu_seconds)
    # Each seat sends its next message only once its own came back through the group.
    assert rate > 0
    assert cpu is not None and cpu > 0
