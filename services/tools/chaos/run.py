"""`stammtisch chaos` (`make chaos`): play many tables while a seeded schedule SIGKILLs processes.

The run starts its own Redis (AOF, fsync always) and NATS (JetStream on disk)
and every service as its own process (a lobby, two engines, two arbiters,
scoring). Bot clients play tables of every game through the SDK while the
schedule kills processes of every kind and starts them again on the same port
and data. Then it checks that every game finished, that every acknowledged
action is in its table's log exactly once, that no client's stream had a gap
or a duplicate, that scoring holds every result once, and that no client saw
INTERNAL or UNKNOWN; and it prints the figures.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from services.tools.chaos.checks import Findings, check_lobby, check_logs, check_scoring, check_settings
from services.tools.chaos.cluster import Cluster
from services.tools.chaos.players import FORBIDDEN, TABLES, Ledger, TableDriver, game_for
from services.tools.chaos.schedule import KillLog, kill_plan, run_schedule
from shared.obs.logs import configure_logging


@dataclass
class Report:
    """What one run did and found."""

    seed: int
    #: Monotonic time the run started (kill and progress times are monotonic too).
    started: float
    kills: KillLog
    ledger: Ledger
    findings: Findings
    elapsed: float
    #: Error lines of the servers' logs by member and cause (for diagnosis; not a check).
    server_errors: Counter[str] = field(default_factory=Counter)

    def unfinished(self) -> list[str]:
        """Tables whose game did not end for every client."""
        return [f"{run.table_id} ({run.game}) did not finish"
                for run in self.ledger.tables.values() if not run.finished]

    def forbidden(self) -> list[str]:
        """Calls answered INTERNAL or UNKNOWN."""
        counts = {code.name: self.ledger.statuses[code.name] for code in FORBIDDEN}
        if not any(counts.values()):
            return []
        return [f"clients saw {counts}",
                *(f"{count} x {call}" for call, count in self.ledger.forbidden_calls.most_common())]

    def problems(self) -> list[str]:
        """Every failed check, one line each; empty when the run passed."""
        f = self.findings
        return [*self.unfinished(), *f.lost, *f.duplicated, *f.log_holes, *self.ledger.stream_faults,
                *f.scoring, *f.lobby, *self.forbidden(), *self.ledger.failures, *self.kills.failures]

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return not self.problems()

    def longest_stall(self) -> tuple[float, float, str, float]:
        """The longest time no table made progress: its length and start, and the kill that
        came last before its end, with its time (times in seconds since the run started)."""
        times = sorted(self.ledger.progress)
        if len(times) < 2:
            return 0.0, 0.0, "", 0.0
        gap, end = max((later - earlier, later) for earlier, later in itertools.pairwise(times))
        killed, at = self.kills.last_before(end)
        return gap, end - gap - self.started, killed, at - self.started

    def lines(self) -> list[str]:
        """The figures, as printed."""
        by_game = Counter(run.game for run in self.ledger.tables.values())
        done = Counter(run.game for run in self.ledger.tables.values() if run.finished)
        stall, stall_at, killed, killed_at = self.longest_stall()
        f = self.findings
        lines = [
            f"Chaos run (seed {self.seed}) in {self.elapsed:.0f} s",
            f"  kills by kind: {dict(sorted(self.kills.by_kind.items()))} "
            f"(total {sum(self.kills.by_kind.values())})",
            "  restart to serving, slowest by kind: " + ", ".join(
                f"{kind} {max(times):.1f} s" for kind, times in sorted(self.kills.restart_seconds.items())),
            "  tables finished: " + ", ".join(f"{game} {done[game]}/{by_game[game]}" for game in TABLES),
            f"  actions acknowledged {len(self.ledger.acknowledged)}, lost {len(f.lost)}, "
            f"duplicated {len(f.duplicated)}, given up {len(self.ledger.abandoned)} "
            f"(refused by the rules {self.ledger.refused})",
            f"  stream gaps or duplicates {len(self.ledger.stream_faults)}, "
            f"scoring problems {len(f.scoring)}, lobby problems {len(f.lobby)}",
            f"  longest stall {stall:.1f} s from +{stall_at:.0f} s"
            + (f" (last kill before its end: {killed} at +{killed_at:.0f} s)" if killed else ""),
            f"  statuses clients saw: {dict(sorted(self.ledger.statuses.items()))}",
            f"  server error lines: {sum(self.server_errors.values())}",
        ]
        problems = self.problems()
        lines.append(f"  result: {'PASS' if not problems else f'FAIL ({len(problems)} problems)'}")
        lines += [f"    {line}" for line in problems[:40]]
        lines += [f"    server log: {count} x {what}" for what, count in self.server_errors.most_common(15)]
        return lines


async def chaos(data_dir: Path, kills: int, seed: int, tables: int, slots: int,
                interval: float, think: float = 0.02) -> Report:
    """One chaos run under ``data_dir``: play, kill, restart, then check everything."""
    started = time.monotonic()
    cluster = Cluster(data_dir)
    ledger, killed, findings = Ledger(), KillLog(), Findings()
    try:
        await cluster.start()
        plan = kill_plan(cluster, kills, seed, interval)
        schedule = asyncio.create_task(run_schedule(cluster, plan, killed))
        numbers = itertools.count()

        async def slot() -> None:
            """Table after table, while the schedule runs and until enough tables were started."""
            for number in numbers:
                if schedule.done() and number >= tables:
                    return
                await TableDriver(ledger, cluster.endpoints, game_for(number), number, think).run()

        cap = sum(k.wait_seconds + k.down_seconds for k in plan) + 60.0 * kills + 300.0
        _done, pending = await asyncio.wait([asyncio.create_task(slot()) for _ in range(slots)],
                                            timeout=cap)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if pending:
            ledger.failures.append(f"tables still playing after the cap of {cap:.0f} s")
        await schedule
        settings = check_settings(cluster.redis_url, cluster.nats_url, cluster.key_prefix)
        await check_logs(settings, ledger, findings)
        await check_scoring(cluster.endpoints, ledger, findings)
        await check_lobby(cluster.endpoints, ledger, findings)
    finally:
        cluster.stop()
    return Report(seed, started, killed, ledger, findings, time.monotonic() - started, cluster.errors())


def main(kills: int, seed: int, tables: int, slots: int, interval: float, keep_logs: bool = False) -> int:
    """Run, print the figures; the logs stay (and their folder is printed) when a check failed
    or ``keep_logs`` asks for them."""
    configure_logging("info", "console")
    data_dir = Path(tempfile.mkdtemp(prefix="stammtisch-chaos-"))
    report = asyncio.run(chaos(data_dir, kills, seed, tables, slots, interval))
    for line in report.lines():
        print(line, flush=True)
    if report.ok and not keep_logs:
        shutil.rmtree(data_dir, ignore_errors=True)
    else:
        print(f"  logs of every process: {data_dir}", flush=True)
    return 0 if report.ok else 1
