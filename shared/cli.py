"""The `stammtisch` command: one entry point for running, replaying and playing."""

from __future__ import annotations

import argparse
import sys

SERVICES = ("lobby", "engine", "arbiter", "scoring")


def _replay(args: argparse.Namespace) -> int:
    from shared.games.replay import main as replay_main

    return replay_main(args.file)


def _up(args: argparse.Namespace) -> int:
    from services.up import up

    return up(args.service or SERVICES)


def _serve(args: argparse.Namespace) -> int:
    from services.up import serve

    return serve(args.service)


def _healthcheck(args: argparse.Namespace) -> int:
    from services.healthcheck import check

    return 0 if check(args.service, args.address) else 1


def build_parser() -> argparse.ArgumentParser:
    """All subcommands; each imports its implementation lazily to start fast."""
    parser = argparse.ArgumentParser(prog="stammtisch", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    up = sub.add_parser("up", help="run the whole stack (starts Redis/NATS if none answer)")
    up.add_argument("--service", action="append", choices=SERVICES,
                    help="only these services (repeatable); default: all four")
    up.set_defaults(func=_up)

    serve = sub.add_parser("serve", help="run services against the configured Redis and NATS")
    serve.add_argument("--service", action="append", choices=SERVICES, required=True)
    serve.set_defaults(func=_serve)

    health = sub.add_parser("healthcheck", help="exit 0 when a service reports SERVING")
    health.add_argument("--service", choices=SERVICES, required=True)
    health.add_argument("--address", help="host:port (default: 127.0.0.1 and its port)")
    health.set_defaults(func=_healthcheck)

    replay = sub.add_parser("replay", help="run a rules conformance scenario (FILE or -)")
    replay.add_argument("file")
    replay.set_defaults(func=_replay)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the chosen subcommand."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
