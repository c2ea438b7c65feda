import { ERROR_CLASS, type Failure, outcomeOfStatus } from "./outcome.ts";
import type { InvocationResult, InvocationUpdate } from "./repos/invocations.ts";

/** Which invocation: every lifecycle verb is scoped by tenant. */
export type InvocationRef = { tenantId: string; id: string; agentId: string };

/** What the terminal hook hears after a terminal write committed (the receipts' input). */
export type TerminalEvent = InvocationRef & {
  status: "succeeded" | "failed";
  /** sha256 of the bytes forwarded each way, when the path hashed them. */
  digests?: { request: string; response: string } | undefined;
  settlement?: { status: string; tx_hash?: string | undefined } | undefined;
  /** What a paid MCP tool call's receipt binds beside its settlement (docs/receipts.md). */
  binding?: ReceiptBinding | undefined;
};

/**
 * A paid MCP tool call's receipt binds the tool it paid for (its exposed name and the digest
 * pinned when the call was admitted) and the policy decision that let it through.
 */
export type ReceiptBinding = {
  tool: { name: string; pinned_digest: string | null };
  decision: { id: string; action: string; matched_rule: string } | null;
};

/** Facts recorded with the terminal state (sizes, latency, captured bodies, settlement, ...). */
export type Facts = Omit<InvocationUpdate, "status" | "errorClass">;
export type Extras = {
  result?: InvocationResult | undefined;
  digests?: TerminalEvent["digests"];
  binding?: ReceiptBinding | undefined;
};

/**
 * Ends one invocation: it was answered (`complete`) or there was no usable answer (`fail`). The
 * answer's `status` decides the outcome and is the recorded `upstream_status`, unless the facts
 * carry `upstreamStatus: null`: the gateway answered itself and no upstream was reached.
 */
export type InvocationHandle = {
  complete: (status: number, facts: Facts, extras?: Extras) => Promise<void>;
  fail: (failure: Failure, facts?: Facts, extras?: Extras) => Promise<void>;
  /** Failed with no error class: settlement failed and the upstream was never called. */
  failUnsettled: (facts: Facts, extras?: Extras) => Promise<void>;
};

/** The terminal states the lifecycle writes, each stamped with the time it ended. */
export const unsettled = (facts: Facts): InvocationUpdate => ({
  completedAt: new Date(),
  ...facts,
  status: "failed",
  errorClass: null,
});

export const completion = (status: number, facts: Facts): InvocationUpdate => ({
  completedAt: new Date(),
  ...facts,
  ...outcomeOfStatus(status),
  upstreamStatus: facts.upstreamStatus === null ? null : status,
});

export const failing = (failure: Failure, facts: Facts): InvocationUpdate => ({
  completedAt: new Date(),
  ...facts,
  status: "failed",
  errorClass: ERROR_CLASS[failure],
});
