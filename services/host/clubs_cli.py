"""`stammtisch friends`, `stammtisch club`, `stammtisch inbox` and `stammtisch play --private /
--code`: the parsers (the work is in shared/sdk/clubs_cli.py, imported when a command runs)."""

from __future__ import annotations

import argparse
from typing import Any

from services.host.addresses import address_arguments, endpoints_of


def _run(args: argparse.Namespace) -> int:
    from shared.sdk import clubs_cli

    return clubs_cli.run(clubs_cli.command(endpoints_of(args), args))  # type: ignore[arg-type]


def add_commands(sub: Any, device_help: str) -> None:
    """Add the friends, club and inbox commands to the `stammtisch` parser."""
    friends = sub.add_parser("friends", help="your friends with presence; ask, accept, block")
    friends.add_argument("action", nargs="?", default="list",
                         choices=("list", "add", "accept", "decline", "remove", "block", "unblock"))
    friends.add_argument("player_id", nargs="?", help="the other player's id (all but list)")
    club = sub.add_parser("club", help="your clubs (Stammtische): create, join by code, chat, evenings")
    club.add_argument("action", choices=("list", "create", "join", "show", "members", "chat", "say",
                                         "invite", "leave", "evening", "checkin", "season"))
    club.add_argument("arg", nargs="*", help="create NAME · join CODE · show|members|chat|leave|checkin|"
                                             "season CLUB · say CLUB TEXT · invite CLUB PLAYER · "
                                             "evening CLUB WEEKDAY HH:MM GAME")
    club.add_argument("--public", action="store_true", help="create: anyone may join by the club's id")
    club.add_argument("--zone", default="", help="create: the club's time zone (Europe/Berlin)")
    inbox = sub.add_parser("inbox", help="your notifications; --watch follows them live (you are online)")
    inbox.add_argument("--watch", action="store_true")
    inbox.add_argument("--read", action="store_true", help="mark everything read")
    inbox.add_argument("--waiting", action="store_true", help="the games waiting on your decision")
    for parser in (friends, club, inbox):
        parser.add_argument("--device", required=True, help=device_help)
        parser.add_argument("--name", default="", help="your display name (first use of the device)")
        address_arguments(parser)
        parser.set_defaults(func=_run, command=parser.prog.split()[-1])
