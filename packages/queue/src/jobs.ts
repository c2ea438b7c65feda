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
