import type { AdmittedPayment } from "@gw/payments";

/**
 * The transactional job: everything the worker needs to make the upstream call, snapshotted when
 * the call was accepted. One definition shared by the producer (proxy) and the consumer (worker).
 */
export type TransactJob = {
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
   * Optional only for jobs enqueued before it existed.
   */
  mcpRequestId?: string | number | null;
  captureBodies: boolean;
  /** The agent's emit_receipts when accepted (false: no receipt, so nothing is hashed). */
  emitReceipts?: boolean | null;
  /** Caller headers, already stripped of Authorization, X-PAYMENT, PAYMENT-SIGNATURE, x-gateway-* and hop-by-hop. */
  headers: string[];
  /** The caller's address, appended to X-Forwarded-For upstream. */
  clientAddress?: string | undefined;
  /** Request body, base64; empty when `bodyStored` (the body lives in Postgres with the invocation). */
  body: string;
  /**
   * The body is not in the job: the worker reads it from the invocation's stored request (bodies
   * over JOB_BODY_MAX_BYTES, and every job the reconciler rebuilt). docs/reliability.md.
   */
  bodyStored?: boolean;
  /**
   * The call's verified x402 payment (a few KiB), which the worker settles before it forwards when
   * `facilitator` is set. Absent for unpriced agents.
   */
  payment?: AdmittedPayment | undefined;
  /**
   * W3C trace context (`traceparent`, `tracestate`) of the producer's `send` span, set by the
   * queue's enqueue: the worker's spans continue the caller's trace. Absent on jobs enqueued
   * before it existed or with telemetry off.
   */
  traceContext?: Record<string, string>;
};

export type ProcessJob = (job: TransactJob) => Promise<void>;

export interface JobQueue {
  /** Enqueues the job, with the active trace context added to it (`traceContext`). */
  enqueue(job: TransactJob): Promise<void>;
  /**
   * Whether a live (waiting, delayed, active) job exists for this invocation. A finished job
   * still kept under its id is removed first, so that `enqueue` can add it again.
   */
  has(invocationId: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface JobConsumer {
  /** Stops taking jobs and waits for the active ones to finish. */
  close(): Promise<void>;
}
