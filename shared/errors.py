"""Refusals outside the rules, in words of the domain, not of a transport.

Core and storage code (the lobby model, the table records and stores) raise
these; only the RPC layer turns them into statuses
(``shared.rpc.errors.status_of_refusal``), as it does for the rules'
:class:`~shared.games.errors.RuleError`. So that code stays importable and
testable without gRPC, and a future transport maps the same four kinds.
"""

from __future__ import annotations


class Refusal(Exception):
    """A request turned down for a reason the caller can act on; ``message`` is for people."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadInput(Refusal):
    """The request is malformed (a bad id, a seat number out of range): fix it, do not retry."""


class NotFound(Refusal):
    """The named thing does not exist (or no longer does)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} not found")


class Refused(Refusal):
    """Well-formed, but not possible in the current state (the seat is taken, a game runs)."""


class Busy(Refusal):
    """A passing condition (a race lost too often, an id taken): retrying later should work."""
