"""Where a command-line client finds the services: --host (direct connections), or --door and
--ca (one TLS address for every service); shared by every client command."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def endpoints_of(args: argparse.Namespace) -> object:
    """Every service through --door (over TLS, trusting --ca), else the services on --host at the
    ports STAMMTISCH_<SERVICE>_PORT name (else the defaults)."""
    from shared.sdk.client import Endpoints

    if args.door:
        return Endpoints.door(args.door, Path(args.ca) if args.ca else None)
    return Endpoints.on_host(args.host)


def address_arguments(parser: argparse.ArgumentParser) -> None:
    """--host (direct connections), or --door and --ca (one TLS address for every service)."""
    parser.add_argument("--host", default="127.0.0.1", help="the services' host (direct connections)")
    parser.add_argument("--door", default=os.environ.get("STAMMTISCH_DOOR", ""),
                        help="grpcs://HOST:PORT of the door, as `stammtisch up` prints it "
                             "(default: $STAMMTISCH_DOOR; unset: direct connections to --host)")
    parser.add_argument("--ca", default=os.environ.get("STAMMTISCH_CA", ""),
                        help="the CA certificate the door is trusted with, as `up` prints it "
                             "(default: $STAMMTISCH_CA; unset: the system's roots)")
