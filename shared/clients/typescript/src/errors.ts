import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorCode, RuleViolationSchema, type RuleViolation } from "./gen/stammtisch/v1/errors_pb.js";

/** The rules refused an action (it changed nothing): `code` is the rules code without its enum
 * prefix ("MUST_FOLLOW", "STALE", ...), as proto/README.md "Errors" lists them. */
export class RefusedAction extends Error {
  constructor(
    readonly code: string,
    readonly reason: string,
    readonly status?: Code,
  ) {
    super(`${code}: ${reason}`);
    this.name = "RefusedAction";
  }
}

/** "ERROR_CODE_MUST_FOLLOW" -> "MUST_FOLLOW". */
export function ruleCodeName(violation: RuleViolation): string {
  return (ErrorCode[violation.code] ?? String(violation.code)).replace(/^ERROR_CODE_/, "");
}

/** The RuleViolation the server packed into a failed call's status details
 * (`grpc-status-details-bin`, a google.rpc.Status), or undefined for any other failure. */
export function ruleViolationOf(error: unknown): RuleViolation | undefined {
  if (!(error instanceof ConnectError)) return undefined;
  return error.findDetails(RuleViolationSchema)[0];
}

/** A failed call as a RefusedAction when it carries a rules code, else the error itself. */
export function refusalOrError(error: unknown): unknown {
  const violation = ruleViolationOf(error);
  if (violation === undefined) return error;
  return new RefusedAction(ruleCodeName(violation), violation.message, ConnectError.from(error).code);
}

/** Statuses after which the same call may be tried again (the same action id is applied once). */
export function retryable(error: unknown): boolean {
  const code = ConnectError.from(error).code;
  return code === Code.Unavailable || code === Code.DeadlineExceeded;
}
