"""Map failures to gRPC statuses: rules codes travel in the status details.

The neutral refusals that core and storage code raise (:mod:`shared.errors`)
get one status per kind: BadInput INVALID_ARGUMENT, NotFound NOT_FOUND,
Refused FAILED_PRECONDITION, Busy UNAVAILABLE.

A refused action becomes INVALID_ARGUMENT (malformed), ABORTED (STALE, a lost
race worth retrying on the new state) or FAILED_PRECONDITION (every other
rules code), with a ``stammtisch.v1.RuleViolation`` packed into the standard
``google.rpc.Status`` details so clients can read the exact code.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import status_pb2
from grpc_status import rpc_status

from shared.api.stammtisch.v1 import errors_pb2
from shared.errors import BadInput, Busy, NotFound, Refusal, Refused
from shared.games.errors import ErrorCode, RuleError

DETAILS_KEY = "grpc-status-details-bin"
#: Longest status message sent. Messages may quote the request; clipped, the message and
#: its RuleViolation copy stay far below a client's trailer limit (8 KiB by default, and
#: percent-encoding can make one character 12 bytes), so the client gets the real status.
MAX_STATUS_MESSAGE = 200

_STATUS_OF_RULE = {
    ErrorCode.INVALID_ACTION: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.STALE: grpc.StatusCode.ABORTED,
}

#: The status of each neutral refusal (a ServiceError carries its own).
_STATUS_OF_REFUSAL = {
    BadInput: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    Refused: grpc.StatusCode.FAILED_PRECONDITION,
    Busy: grpc.StatusCode.UNAVAILABLE,
}


class ServiceError(Refusal):
    """A refusal the RPC layer names by its status itself (bad token, rate limit, ...)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        message = clipped(message)
        super().__init__(message)
        self.code = code


def clipped(message: str) -> str:
    """The message, cut to MAX_STATUS_MESSAGE characters."""
    if len(message) <= MAX_STATUS_MESSAGE:
        return message
    return message[:MAX_STATUS_MESSAGE - 1] + "…"


def not_found(what: str) -> ServiceError:
    """The named thing does not exist."""
    return ServiceError(grpc.StatusCode.NOT_FOUND, f"{what} not found")


def invalid(message: str) -> ServiceError:
    """The request is malformed."""
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, message)


def precondition(message: str) -> ServiceError:
    """The request is well-formed but not possible now."""
    return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, message)


def unavailable(message: str) -> ServiceError:
    """A passing condition; retrying later should work."""
    return ServiceError(grpc.StatusCode.UNAVAILABLE, message)


def status_of_refusal(err: Refusal) -> grpc.StatusCode:
    """The gRPC status code a refusal outside the rules travels with."""
    if isinstance(err, ServiceError):
        return err.code
    return next((code for kind, code in _STATUS_OF_REFUSAL.items() if isinstance(err, kind)),
                grpc.StatusCode.FAILED_PRECONDITION)


def status_of_rule(code: ErrorCode) -> grpc.StatusCode:
    """The gRPC status code a rules refusal travels with."""
    return _STATUS_OF_RULE.get(code, grpc.StatusCode.FAILED_PRECONDITION)


def rule_error_trailers(err: RuleError) -> tuple[grpc.StatusCode, str, tuple[tuple[str, bytes], ...]]:
    """Status code, message and trailing metadata carrying the RuleViolation."""
    code, message = status_of_rule(err.code), clipped(err.message)
    detail = any_pb2.Any()
    detail.Pack(errors_pb2.RuleViolation(code=rule_code_to_proto(err.code), message=message))
    status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    return code, message, ((DETAILS_KEY, status.SerializeToString()),)


def rule_code_to_proto(code: ErrorCode) -> errors_pb2.ErrorCode.ValueType:
    """ErrorCode -> stammtisch.v1.ErrorCode enum value."""
    return errors_pb2.ErrorCode.Value(f"ERROR_CODE_{code.value}")


def rule_violation_of(error: grpc.RpcError) -> errors_pb2.RuleViolation | None:
    """Client side: the RuleViolation inside a failed call's status, if any."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(errors_pb2.RuleViolation.DESCRIPTOR):
            violation = errors_pb2.RuleViolation()
            detail.Unpack(violation)
            return violation
    return None


def rule_code_name(violation: errors_pb2.RuleViolation) -> str:
    """The rules code name ("MUST_FOLLOW") of a RuleViolation."""
    return str(errors_pb2.ErrorCode.Name(violation.code)).removeprefix("ERROR_CODE_")
