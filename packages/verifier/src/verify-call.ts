import { conflict, DomainError } from "@gw/core";
import type { Query } from "@gw/db";
import type { McpMessage } from "@gw/mcp";
import { compareVerifiedAction, type Mismatch } from "./compare.ts";
import { readVerifiedActionBody } from "./envelope.ts";
import { digestReservation, isDigestReserved, type Reservation } from "./replay.ts";
import { type RunOptions, runVerifier, type VerifierFailure } from "./run.ts";

export type VerifiedActionDeps = {
  /** Absolute path of the verifier program (GW_VERIFIER_BINARY). */
  binary: string;
  query: Query;
  run?: RunOptions;
  /** Told why a call was refused, for logs and metrics (never carries request bytes). */
  onRefused?: (why: VerifierFailure | `mismatch_${Mismatch}` | "replay") => void;
};

export type VerifiedActionInput = {
  /** The request body as received (transactional endpoint, MCP agent). */
  body: Uint8Array;
  sub: string;
  tenantId: string;
  agentId: string;
};

export type VerifiedAction = {
  /** The inner call's exact bytes: the only thing forwarded. */
  forward: Buffer;
  message: McpMessage;
  digest: string;
  /** To write in the invocation's transaction: a second use of the digest is then impossible. */
  reservation: Reservation;
};

export const VERIFIED_AUTHORIZATION_REQUIRED = "verified authorization required";
/**
 * A verified request whose digest was already used: the answer of the replay preflight here and
 * of the reservation the invocation record takes (a second call that raced past the preflight).
 */
export const authorizationAlreadyUsed = () => conflict("authorization already used");

const forbidden = (message: string) => new DomainError("forbidden", message);

/**
 * Verified-action mode for one MCP body on the transactional endpoint (docs/interface.md, The proxy pipeline, step 5):
 * envelope checks (400/413), the external verifier (403), the comparison of the verified request
 * with the inner call (403) and the replay preflight (409), in that order. Returns null for a
 * JSON-RPC message other than tools/call, which this mode leaves alone; a bare tools/call is 403.
 */
export async function verifyMcpCall(
  input: VerifiedActionInput,
  deps: VerifiedActionDeps,
): Promise<VerifiedAction | null> {
  const read = readVerifiedActionBody(input.body);
  if (read.kind === "jsonrpc") {
    if (read.message.method === "tools/call") throw forbidden(VERIFIED_AUTHORIZATION_REQUIRED);
    return null;
  }
  const result = await runVerifier(deps.binary, read.authorization, deps.run);
  if (!result.ok) {
    deps.onRefused?.(result.reason);
    throw forbidden("authorization not verified");
  }
  const mismatch = compareVerifiedAction(result.output, {
    tool: read.tool,
    arguments: read.arguments,
    sub: input.sub,
    tenantId: input.tenantId,
    agentId: input.agentId,
  });
  if (mismatch !== null) {
    deps.onRefused?.(`mismatch_${mismatch}`);
    throw forbidden("call does not match the verified authorization");
  }
  const digest = result.output.request_digest;
  if (await isDigestReserved(deps.query, input.tenantId, digest)) {
    deps.onRefused?.("replay");
    throw authorizationAlreadyUsed();
  }
  return {
    forward: read.call,
    message: read.message,
    digest,
    reservation: digestReservation(input.tenantId, digest),
  };
}
