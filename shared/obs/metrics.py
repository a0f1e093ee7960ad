"""The Prometheus metrics every service exports; dashboards and alerts query these names.

Kept in one module so that deploy/ (dashboards, alert rules) and the code
cannot drift apart: tests/deploy checks every metric the deploy files query
is defined here.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import Counter, Gauge, Histogram, start_http_server

RPC_LATENCY = Histogram(
    "stammtisch_rpc_duration_seconds", "gRPC handling time by service, method and status code",
    ["service", "method", "code"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
BAD_REQUESTS = Counter(
    "stammtisch_bad_requests_total",
    "Requests refused because their bytes are not a valid message of the method, by service and method",
    ["service", "method"],
)
ACTIONS = Counter(
    "stammtisch_actions_total", "Game actions by game, outcome (applied/refused) and rules code",
    ["game", "outcome", "code"],
)
LIVE_TABLES = Gauge("stammtisch_live_tables", "Tables with a running game, by game", ["game"])
OPEN_STREAMS = Gauge("stammtisch_open_streams", "Open server streams by service", ["service"])
REDIS_UNREPLICATED = Counter(
    "stammtisch_redis_unreplicated_writes_total",
    "Writes acknowledged although no Redis replica confirmed a copy in time (a failover may lose them)",
)
COMMIT_RETRIES = Counter(
    "stammtisch_commit_retries_total", "Optimistic commits retried after a concurrent write",
    ["game"],
)
EVENT_LAG = Histogram(
    "stammtisch_event_lag_seconds", "Time from commit to delivery on a player's stream",
    ["service"], buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5),
)
EVENT_LOOP_LAG = Histogram(
    "stammtisch_event_loop_lag_seconds",
    "How much later than asked a server process's event loop woke a sleeping probe (shared/obs/looplag.py)",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1),
)
TURN_CLOCK_EXPIRIES = Counter(
    "stammtisch_turn_clock_expiries_total", "Default actions applied because a deadline passed",
    ["game"],
)
TABLES_CLOSED = Counter(
    "stammtisch_tables_closed_total", "Tables closed before their game ended, by why (README)",
    ["game", "reason"],
)
RESULTS_PUBLISHED = Counter(
    "stammtisch_results_published_total", "Round and game results published to JetStream",
    ["kind"],
)
RESULTS_CONSUMED = Counter(
    "stammtisch_results_consumed_total",
    "Game results handled by scoring, by outcome (recorded/duplicate/rejected/failed)",
    ["outcome"],
)


def count_from_zero(counter: Counter, label_sets: Iterable[tuple[str, ...]]) -> None:
    """Give a labelled counter of rare events a series at 0 per label set before its first event, so
    its panel shows 0 rather than "No data" and ratio alerts have something to divide."""
    for labels in label_sets:
        counter.labels(*labels)


#: Tournaments: each director reports the tournaments whose lease it holds, so sums over
#: replicas are totals.
TOURNAMENTS_RUNNING = Gauge("stammtisch_tournaments_running",
                            "Tournaments running or paused, directed by this process")
TOURNAMENT_PLAYERS = Gauge("stammtisch_tournament_players",
                           "Players still in the tournaments this process directs")
TOURNAMENT_TABLES_OPEN = Gauge("stammtisch_tournament_tables_open",
                               "Tables of current rounds still playing, in tournaments this process directs")
TOURNAMENT_ROUNDS = Counter("stammtisch_tournament_rounds_total", "Tournament rounds seated")
TOURNAMENT_ROUND_DURATION = Histogram(
    "stammtisch_tournament_round_duration_seconds", "Time from a round's seating to its last game's result",
    buckets=(5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200),
)
#: Clubs and friends (services/clubs). The outbox depth is the same for every replica (it
#: counts Redis): dashboards and alerts take its max over instances.
FRIEND_REQUESTS = Counter("stammtisch_friend_requests_total",
                          "Friend requests by outcome (sent, accepted, declined)", ["outcome"])
CLUBS_CREATED = Counter("stammtisch_clubs_created_total", "Clubs created")
CLUB_MESSAGES = Counter("stammtisch_club_messages_total", "Club chat messages posted")
NOTIFICATIONS_CREATED = Counter("stammtisch_notifications_total", "Inbox notifications created by kind",
                                ["kind"])
PUSH_SENT = Counter("stammtisch_push_sent_total", "Push jobs delivered to the gateway by kind", ["kind"])
PUSH_FAILED = Counter("stammtisch_push_failed_total", "Push deliveries given up or refused by reason",
                      ["reason"])
PUSH_LATENCY = Histogram(
    "stammtisch_push_latency_seconds", "Time from a push job being due to its delivery",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)
OUTBOX_DEPTH = Gauge("stammtisch_push_outbox_depth", "Push jobs waiting in the outbox (all shards)")


def serve_metrics(port: int, host: str = "0.0.0.0") -> int:
    """Expose /metrics over HTTP; port 0 picks a free one. Returns the bound port."""
    server, _thread = start_http_server(port, addr=host)
    return int(server.server_port)
