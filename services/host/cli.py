"""The `stammtisch` command: one entry point for running, replaying and playing."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from services.host import clubs_cli
from services.host.addresses import address_arguments, endpoints_of
from shared.config import SERVICE_NAMES, Settings
from shared.games.catalog import CATALOGUE

#: The organizer's lasting identity unless --device names another: `tournament create` makes
#: it, the organizer controls log in with it (so they work from any later shell).
ORGANIZER_DEVICE = os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"),
                                "stammtisch", "organizer.json")
CONTROL_HELP = {"start": "start now", "pause": "seat no new round until resumed (the running one ends)",
                "resume": "seat rounds again", "cancel": "stop for good (the standings so far are final)",
                "remove": "withdraw a player (a bot plays out their running game)",
                "next-round": "start the next round (a tournament with manual_rounds)"}


def _replay(args: argparse.Namespace) -> int:
    if args.table:
        from shared.sdk.replays import replay_table

        return replay_table(endpoints_of(args), args.device, args.table, args.game,  # type: ignore[arg-type]
                            args.save, args.delay)
    if not args.file:
        print("replay: give a scenario FILE or --table ID", file=sys.stderr)
        return 2
    from shared.games.replay import main as replay_main

    return replay_main(args.file)


def _verify(args: argparse.Namespace) -> int:
    from shared.sdk.replays import verify_main

    return verify_main(endpoints_of(args), args.device, args.file, args.table, args.game)  # type: ignore[arg-type]


def _history(args: argparse.Namespace) -> int:
    from shared.sdk.replays import history_main

    return history_main(endpoints_of(args), args.device, args.page_size)  # type: ignore[arg-type]


#: The grpc-core experiments the servers run with, unless GRPC_EXPERIMENTS says otherwise: the
#: connections a server accepts are served by grpc-core's own poller, on the thread that already
#: waits for the completion queue, instead of by EventEngine threads that hand every read and
#: write over to it (a wake-up of another thread per message). Server CPU per action, 100
#: tables: 1.11-1.17 -> 0.88-1.07 ms; the bare gRPC fan-out: 159-195 -> 137-143 us per action.
SERVER_GRPC_EXPERIMENTS = "-event_engine_listener"


def _server_environment() -> None:
    """Set what grpc-core reads from the environment, before anything of gRPC is loaded."""
    os.environ.setdefault("GRPC_EXPERIMENTS", SERVER_GRPC_EXPERIMENTS)


def _up(args: argparse.Namespace) -> int:
    _server_environment()
    from services.host.up import up

    return up(args.service or SERVICE_NAMES, args.workers)


def _serve(args: argparse.Namespace) -> int:
    _server_environment()
    from services.host.up import serve

    return serve(args.service)


def _healthcheck(args: argparse.Namespace) -> int:
    from services.host.healthcheck import check

    return 0 if check(args.service, args.address) else 1


def _option(text: str) -> tuple[str, Any]:
    """One ``--option name=value``: the value as JSON (17, 2.5, true, "x"), else as the text."""
    name, equals, value = text.partition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"expected name=value, got {text!r}")
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value


def _game_options(game: str, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The ``--option`` pairs as the game's options; a name the game lacks ends the command
    (the server checks types and bounds)."""
    known = [option.name for option in CATALOGUE[game].options]
    for name, _value in pairs:
        if name not in known:
            sys.exit(f"stammtisch: {game} has no option {name!r} (its options: {', '.join(known) or 'none'})")
    return dict(pairs)


def _play(args: argparse.Namespace) -> int:
    import asyncio

    from shared.sdk.terminal import run

    if args.tournament:
        from shared.sdk import tournament_cli

        return tournament_cli.run(tournament_cli.play(endpoints_of(args), args.tournament,  # type: ignore[arg-type]
                                                      args.name, args.device))
    if args.private or args.code:
        from shared.sdk import clubs_cli

        if not args.device:
            sys.exit("stammtisch play --private/--code: give --device (invitations know your player)")
        game = args.game or ""
        return clubs_cli.run(clubs_cli.play_private(
            endpoints_of(args), game, args.seats or (CATALOGUE[game].default_seats if game else 0),  # type: ignore[arg-type]
            args.turn_seconds, args.invite, args.code or "", args.name, args.device))
    if not args.game:
        sys.exit("stammtisch play: name a game (or --code CODE)")

    return asyncio.run(run(args.game, args.name, args.seats, args.bots, args.table,
                           endpoints_of(args), args.turn_seconds, args.device,  # type: ignore[arg-type]
                           _game_options(args.game, args.option)))


def _bots(args: argparse.Namespace) -> int:
    import asyncio

    from shared.obs.logs import configure_logging
    from shared.sdk.filler import fill_tables

    configure_logging("info", "console")
    return asyncio.run(fill_tables(endpoints_of(args), args.game, args.level,  # type: ignore[arg-type]
                                   args.think, args.once))


def _tournament(args: argparse.Namespace) -> int:
    from shared.sdk import tournament_cli

    endpoints = endpoints_of(args)
    if args.action == "create":
        args.option = _game_options(args.game, args.option)
        return tournament_cli.run(tournament_cli.create(endpoints, args))  # type: ignore[arg-type]
    if args.action == "join":
        return tournament_cli.run(tournament_cli.join(endpoints, args.id, args.bots,  # type: ignore[arg-type]
                                                      args.think))
    if args.action == "watch":
        return tournament_cli.run(tournament_cli.watch(endpoints, args.id))  # type: ignore[arg-type]
    if args.action == "page":
        return tournament_cli.run(tournament_cli.page(endpoints, args.id, args.device, args.host,  # type: ignore[arg-type]
                                                      Settings.from_env().tournament_page_port))
    if args.action in CONTROL_HELP:
        return tournament_cli.run(tournament_cli.control(endpoints, args.action, args.id,  # type: ignore[arg-type]
                                                         args.device, getattr(args, "player", "")))
    return tournament_cli.run(tournament_cli.standings(endpoints, args.id))  # type: ignore[arg-type]


def _winrate(args: argparse.Namespace) -> int:
    from shared.games.winrate import main as winrate_main

    return winrate_main(args.game, args.seats, args.games, args.candidate, args.opponent)


def _bench(args: argparse.Namespace) -> int:
    if args.soak:
        from services.tools.perf.soak import main as soak_main

        return soak_main(args.workers, args.tables, args.streams)
    if args.catchup:
        from services.tools.perf.catchup import main as catchup_main

        return catchup_main()
    if args.door:
        from services.tools.perf.loadtest import main as loadtest_main

        return loadtest_main(None, args.door_tables, 240.0, args.workers, door=True)
    from services.tools.perf.bench import main as bench_main

    return bench_main(args.workers)


def _loadtest(args: argparse.Namespace) -> int:
    if args.clubs:
        from services.tools.perf.clubs_load import main as clubs_main

        return clubs_main(args.players)
    if args.tournament:
        from services.tools.perf.tournament_load import main as tournament_main

        return tournament_main(args.players, args.seconds, args.think, args.client_processes)
    from services.tools.perf.loadtest import main as loadtest_main

    return loadtest_main(args.game, args.tables, args.seconds, args.workers, not args.unary, args.door)


def _chaos(args: argparse.Namespace) -> int:
    from services.tools.chaos.run import main as chaos_main

    return chaos_main(args.kills, args.seed, args.tables, args.slots, args.interval, args.keep_logs)


DEVICE_HELP = ("log in as the lasting player of this device file (made with a random id and "
               "secret on first use)")


def _game_arguments(parser: argparse.ArgumentParser) -> None:
    """--table/--game/--device/--host/--door/--ca of the commands that fetch a finished game."""
    parser.add_argument("--table", help="the finished game's table")
    parser.add_argument("--game", type=int, default=0, help="its game number (default: the newest)")
    parser.add_argument("--device", help=DEVICE_HELP + "; default: a guest login")
    address_arguments(parser)


def build_parser() -> argparse.ArgumentParser:
    """All subcommands; each imports its implementation lazily to start fast."""
    parser = argparse.ArgumentParser(prog="stammtisch", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    up = sub.add_parser("up", help="run the whole stack (starts Redis/NATS if none answer)")
    up.add_argument("--service", action="append", choices=SERVICE_NAMES,
                    help="only these services (repeatable); default: all")
    up.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="server processes sharing the ports (default: one per core)")
    up.set_defaults(func=_up)

    serve = sub.add_parser("serve", help="run services against the configured Redis and NATS")
    serve.add_argument("--service", action="append", choices=SERVICE_NAMES, required=True)
    serve.set_defaults(func=_serve)

    health = sub.add_parser("healthcheck", help="exit 0 when a service reports SERVING")
    health.add_argument("--service", choices=SERVICE_NAMES, required=True)
    health.add_argument("--address", help="host:port (default: 127.0.0.1 and its port)")
    health.set_defaults(func=_healthcheck)

    games = tuple(CATALOGUE)
    seat_defaults = ", ".join(f"{name} {game.default_seats}" for name, game in CATALOGUE.items())
    option_help = ("a game option of the table, repeatable (" + "; ".join(
        f"{name}: {', '.join(option.name for option in game.options)}"
        for name, game in CATALOGUE.items() if game.options) + ")")
    play = sub.add_parser("play", help="play a game in the terminal (bots fill the other seats)")
    play.add_argument("game", choices=games, nargs="?")
    play.add_argument("--name", default="you")
    play.add_argument("--seats", type=int, help=f"table size (default: {seat_defaults})")
    play.add_argument("--bots", default="heuristic", choices=("heuristic", "random"))
    play.add_argument("--table", help="join this table instead of creating one")
    play.add_argument("--turn-seconds", type=int, default=0, help="turn clock (0: the server's default)")
    play.add_argument("--option", type=_option, action="append", default=[], metavar="NAME=VALUE",
                      help=option_help)
    play.add_argument("--tournament", help="register for this tournament and play your seats in it")
    play.add_argument("--private", action="store_true",
                      help="a private table: prints its code; no bots, others come by --invite or code")
    play.add_argument("--invite", action="append", default=[], metavar="PLAYER_ID",
                      help="with --private: invite a friend or club member (a seat held for them)")
    play.add_argument("--code", help="sit down at a private table by its code")
    address_arguments(play)
    play.add_argument("--device", help=DEVICE_HELP)
    play.set_defaults(func=_play)

    tournament = sub.add_parser("tournament", help="create, join (with bots), watch a tournament")
    actions = tournament.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="create a tournament (and bring bot entries)")
    create.add_argument("--game", required=True, choices=games)
    create.add_argument("--format", default="series", choices=("series", "knockout"))
    create.add_argument("--title", default="Stammtisch")
    create.add_argument("--name", default="organizer", help="the organizer's display name")
    create.add_argument("--capacity", type=int, default=200)
    create.add_argument("--rounds", type=int, default=3, help="series: rounds")
    create.add_argument("--games", type=int, default=1, help="games per table and round")
    create.add_argument("--table-size", type=int, default=4)
    create.add_argument("--keep", type=int, default=1, help="knockout: players per table who go on")
    create.add_argument("--option", type=_option, action="append", default=[], metavar="NAME=VALUE",
                        help=option_help + " of every table")
    create.add_argument("--duplicate", action="store_true", help="duplicate deals (games that have them)")
    create.add_argument("--round-seconds", type=int, default=0, help="round time limit (0: none)")
    create.add_argument("--start-in", type=float, default=60.0, help="seconds until it starts")
    create.add_argument("--bots", type=int, default=0, help="bot clients that register and play")
    create.add_argument("--think", type=float, default=0.3, help="seconds a bot waits before acting")
    organizer_help = ("the organizer's device file (made on first use; default: "
                      "$XDG_CONFIG_HOME/stammtisch/organizer.json)")
    create.add_argument("--device", default=str(ORGANIZER_DEVICE), help=organizer_help)
    join = actions.add_parser("join", help="register bot clients that play through the API")
    join.add_argument("id")
    join.add_argument("--bots", type=int, default=1)
    join.add_argument("--think", type=float, default=0.3)
    for name in ("watch", "standings"):
        actions.add_parser(name, help=f"{name} of a tournament").add_argument("id")
    page = actions.add_parser("page", help="the tournament's web page (its organizer: a link that logs in)")
    page.add_argument("id")
    page.add_argument("--device", default=str(ORGANIZER_DEVICE), help=organizer_help)
    for name in ("start", "pause", "resume", "cancel", "remove", "next-round"):
        control = actions.add_parser(name, help=f"organizer: {CONTROL_HELP[name]}")
        control.add_argument("id")
        if name == "remove":
            control.add_argument("player", help="player id (or its start, as `watch` shows) or name")
        control.add_argument("--device", default=str(ORGANIZER_DEVICE), help=organizer_help)
    for parser_ in actions.choices.values():
        address_arguments(parser_)
    tournament.set_defaults(func=_tournament)

    bots = sub.add_parser("bots", help="fill open seats of open tables with bot clients")
    bots.add_argument("--game", choices=games)
    bots.add_argument("--level", default="heuristic", choices=("heuristic", "random"))
    bots.add_argument("--think", type=float, default=0.3, help="seconds a bot waits before acting")
    bots.add_argument("--once", action="store_true", help="fill what is open now, then stop")
    address_arguments(bots)
    bots.set_defaults(func=_bots)

    winrate = sub.add_parser("winrate", help="win rate of one bot level against another")
    winrate.add_argument("game", choices=games)
    winrate.add_argument("--seats", type=int, default=4)
    winrate.add_argument("--games", type=int, default=1000)
    winrate.add_argument("--candidate", default="heuristic", choices=("heuristic", "random"))
    winrate.add_argument("--opponent", default="random", choices=("heuristic", "random"))
    winrate.set_defaults(func=_winrate)

    bench = sub.add_parser("bench", help="engine, bare-cost and arbiter benchmarks; prints figures")
    bench.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                       help="server processes of the multi-worker steps (default: one per core)")
    bench.add_argument("--soak", action="store_true",
                       help="instead: hold many live tables and open streams, print the servers' memory")
    bench.add_argument("--catchup", action="store_true",
                       help="instead: only the catch-up step (resume from seq 0 over a 5,000-commit log)")
    bench.add_argument("--tables", type=int, default=1000, help="--soak: live tables")
    bench.add_argument("--door", action="store_true",
                       help="only the door's cost: the load test's tables directly, then through the door "
                            "(nginx CPU per action, added p50/p99), side by side")
    bench.add_argument("--door-tables", type=int, default=25, help="--door: tables each time")
    bench.add_argument("--streams", type=int, default=4000, help="--soak: open streams")
    bench.set_defaults(func=_bench)

    load = sub.add_parser("loadtest", help="a tournament of bot clients through the full stack")
    load.add_argument("--game", choices=games, help="the game (default: the load test's own)")
    load.add_argument("--tables", type=int, default=25)
    load.add_argument("--seconds", type=float, default=240.0, help="time cap")
    load.add_argument("--tournament", action="store_true",
                      help="bot entrants play a series and a knockout (the tournament load's plans)")
    load.add_argument("--players", type=int, default=200,
                      help="with --tournament: entrants; with --clubs: players")
    load.add_argument("--clubs", action="store_true",
                      help="players befriend, found and join clubs, chat and invite; prints requests/s, "
                           "notifications/s and the push outbox latency")
    load.add_argument("--think", type=float, default=1.0,
                      help="with --tournament: seconds an entrant thinks per decision (0: full speed)")
    load.add_argument("--client-processes", type=int, default=0,
                      help="with --tournament: client processes (0: one per 500 entrants, at least 2)")
    load.add_argument("--workers", type=int, default=1, help="server processes (stammtisch up --workers)")
    load.add_argument("--door", action="store_true",
                      help="then the same again through the door; prints both side by side")
    load.add_argument("--unary", action="store_true",
                      help="bots act by unary Act calls next to Subscribe, not over Play streams")
    load.set_defaults(func=_loadtest)

    chaos = sub.add_parser("chaos", help="play tables while a seeded schedule SIGKILLs every kind "
                           "of process; checks nothing acknowledged is lost or doubled")
    chaos.add_argument("--kills", type=int, default=36)
    chaos.add_argument("--seed", type=int, default=1)
    chaos.add_argument("--tables", type=int, default=24, help="at least this many tables")
    chaos.add_argument("--slots", type=int, default=8, help="tables played at the same time")
    chaos.add_argument("--interval", type=float, default=4.0, help="mean seconds between kills")
    chaos.add_argument("--keep-logs", action="store_true", help="keep every process's log (kept anyway "
                       "when a check fails)")
    chaos.set_defaults(func=_chaos)

    replay = sub.add_parser("replay", help="run a rules conformance scenario (FILE or -), or play "
                                           "back a finished game (--table ID)")
    replay.add_argument("file", nargs="?")
    _game_arguments(replay)
    replay.add_argument("--save", help="also write the replay to this file (for stammtisch verify)")
    replay.add_argument("--delay", type=float, default=0.0, help="seconds between commits")
    replay.set_defaults(func=_replay)

    verify = sub.add_parser("verify", help="check a finished game's deals and moves against its "
                                           "revealed seed (a saved REPLAY file, or --table ID)")
    verify.add_argument("file", nargs="?")
    _game_arguments(verify)
    verify.set_defaults(func=_verify)

    history = sub.add_parser("history", help="your finished games (as the player of --device)")
    history.add_argument("--device", required=True, help=DEVICE_HELP)
    history.add_argument("--page-size", type=int, default=20)
    address_arguments(history)
    history.set_defaults(func=_history)
    clubs_cli.add_commands(sub, DEVICE_HELP)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the chosen subcommand."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
