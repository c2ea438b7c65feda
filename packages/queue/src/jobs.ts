import type { AdmittedPayment } from "@gw/payments";

/**
 * What the doorbell carries for one accepted transactional call: ids only. The call itself (its
 * job fields and body) is stored in Postgres with the pending invocation, the source of truth
 * (docs/adr/0020, 0023); the worker reads it in the statement that claims the call.
 */
export type CallRef = {
  tenantId: string;
  agentId: string;
  invocationId: string;
  /**
   * W3C trace context (`traceparent`, `tracestate`) of the producer's `send` span, set by the
   * queue's enqueue: the worker's spans continue the caller's trace. Absent with telemetry off.
   */
  traceContext?: Record<string, string>;
};

/**
 * The transactional call as the worker makes it: everything snapshotted when the call was
 * accepted (stored as `invocation_requests.job`, jsonb) and the bytes to forward.
 */
export type StoredJob = {
  invocationId: string;
  tenantId: string;
  agentId: string;
  /** The agent's upstream when the call was accepted; the dial-time guard still checks it. */
  upstreamUrl: string;
  credentialRef: string | null;
  protocol: "http" | "mcp";
  /** JSON-RPC method of an MCP call; decides whether a retry is allowed. */
  mcpMethod: string | null;
  /**
   * JSON-RPC id of an MCP request (null for a notification, a response or an http agent): the
   * worker collects the response with this id when the server answers with an event stream.
   * Optional only for calls stored before it existed.
   */
  mcpRequestId?: string | number | null;
  captureBodies: boolean;
  /** The agent's emit_receipts when accepted (false: no receipt, so nothing is hashed). */
  emitReceipts?: boolean | null;
  /** Caller headers, already stripped of Authorization, X-PAYMENT, PAYMENT-SIGNATURE, x-gateway-* and hop-by-hop. */
  headers: string[];
  /** The caller's address, appended to X-Forwarded-For upstream. */
  clientAddress?: string | undefined;
  /**
   * The call's verified x402 payment (a few KiB), which the worker settles before it forwards when
   * `facilitator` is set. Absent for unpriced agents.
   */
  payment?: AdmittedPayment | undefined;
  /**
   * The caller's bearer token, sealed with the credentials keyring to this tenant and invocation,
   * present only when the agent's credential is oauth2_token_exchange (the worker exchanges it).
   * It lives in the stored request, never in Redis, and goes when the request is purged.
   */
  subjectToken?: { ciphertext: string; wrappedKey: string; kekId: string } | undefined;
};

export type TransactJob = StoredJob & { body: Buffer };

/**
 * One delivery of a call. `redelivered`: the queue handed out the job carrying it before, to a
 * worker that died (BullMQ's stalled check); a call found running is then that worker's, else it
 * is another delivery's and is left alone.
 */
export type Delivery = { redelivered: boolean };

export type ProcessCall = (call: CallRef, delivery: Delivery) => Promise<void>;

export interface JobQueue {
  /**
   * Rings for one accepted call, with the active trace context added (`traceContext`). Calls
   * enqueued in the same turn of the event loop (a group-committed batch of pending rows) go to
   * Redis as one job.
   */
  enqueue(call: CallRef): Promise<void>;
  /** Invocation ids of the calls in live (waiting, delayed, active) jobs: the reconciler's check. */
  live(): Promise<Set<string>>;
  close(): Promise<void>;
}

export interface JobConsumer {
  /** Stops taking jobs and waits for the active ones to finish. */
  close(): Promise<void>;
}
