import { DomainError } from "@gw/core";
import type { Failure } from "@gw/invocations";

const ANSWERS: Record<Failure, [kind: "bad_gateway" | "gateway_timeout", message: string]> = {
  timeout: ["gateway_timeout", "upstream timed out"],
  ssrf_blocked: ["bad_gateway", "upstream address is not allowed"],
  credential: ["bad_gateway", "upstream credential unavailable"],
  internal: ["bad_gateway", "upstream call failed"],
  unreachable: ["bad_gateway", "upstream unreachable"],
  cancelled: ["bad_gateway", "upstream call cancelled"],
  no_response: ["bad_gateway", "upstream call failed"],
  too_large: ["bad_gateway", "upstream call failed"],
};

/**
 * The caller's answer to a relayed call that failed before the upstream answered: 502 when it was
 * unreachable or refused, 504 when it timed out (docs/architecture.md, the pipeline), with the gateway's headers (the
 * invocation id).
 */
export function upstreamError(failure: Failure, headers: Record<string, string>): DomainError {
  const [kind, message] = ANSWERS[failure];
  return new DomainError(kind, message, { headers });
}
