"""The `stammtisch` command: one entry point for running, replaying and playing."""

from __future__ import annotations

import argparse
import sys


def _replay(args: argparse.Namespace) -> int:
    from shared.games.replay import main as replay_main

    return replay_main(args.file)


def build_parser() -> argparse.ArgumentParser:
    """All subcommands; each imports its implementation lazily to start fast."""
    parser = argparse.ArgumentParser(prog="stammtisch", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
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
