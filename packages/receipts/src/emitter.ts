import { agentRepo } from "@gw/agents";
import { newId } from "@gw/core";
import type { Db, ReceiptRow } from "@gw/db";
import { type Logger, recordReceiptFailure } from "@gw/telemetry";
import type { JWK } from "jose";
import type { ReceiptKey } from "./key.ts";
import { receiptRepo } from "./repos/receipts.ts";
import { type DetachedSignature, type ReceiptPayload, signDetached, signReceipt } from "./sign.ts";

/** Where signed receipts go; the default stores them and links them from their subject. */
export type ReceiptSink = { save: (tenantId: string, row: Omit<ReceiptRow, "tenantId">) => Promise<void> };

export function storeSink(db: Db): ReceiptSink {
  return { save: (tenantId, row) => receiptRepo.save(db, tenantId, row) };
}

/** An agent wants receipts unless its `emit_receipts` is false (null follows the deployment). */
export function agentWantsReceipts(db: Db) {
  return async (tenantId: string, agentId: string): Promise<boolean> =>
    (await agentRepo.emitReceipts(db, tenantId, agentId)) !== false;
}

/** A terminal invocation, as the lifecycle reports it. */
export type InvocationTerminal = {
  tenantId: string;
  invocationId: string;
  agentId: string;
  status: string;
  digests?: { request: string; response: string } | undefined;
  settlement?: { status: string; tx_hash?: string | undefined } | undefined;
  /** A paid MCP tool call: the tool (and its pinned digest) and the decision the receipt binds. */
  binding?: ReceiptPayload["binding"] | undefined;
};

export type DecisionMade = {
  tenantId: string;
  decisionId: string;
  agentId: string;
  action: string;
  /** The approval a `require_approval` rule asked for or used (docs/policy.md "Approvals"). */
  approvalId?: string | undefined;
};

export type ReceiptEmitter = {
  /** The actor URI receipts are signed as (posture.receipt_actor). */
  readonly actor: string;
  /** The public key set verifiers use (GET /v1/receipts/jwks). */
  readonly jwks: { keys: JWK[] };
  /** Queues a receipt for a terminal invocation. Never throws, never waits. */
  invocation: (e: InvocationTerminal) => void;
  /** Queues a receipt for a policy decision. Never throws, never waits. */
  decision: (e: DecisionMade) => void;
  /** Waits (bounded) for queued receipts; used on shutdown and by tests. */
  drain: (timeoutMs: number) => Promise<void>;
  /**
   * Signs a document the gateway publishes (an A2A agent card) with the receipt key: a JWS JSON
   * serialization with a detached payload, `kid` as in the JWKS (docs/a2a.md).
   */
  signDetached: (payload: string, header: { typ: string; jku?: string }) => Promise<DetachedSignature>;
};

export type EmitterOptions = {
  key: ReceiptKey;
  actor: string;
  sink: ReceiptSink;
  logger: Logger;
  /** Receipts signed and stored at once; the rest wait in a queue. */
  maxConcurrent?: number;
  /** Beyond this many waiting receipts new ones are shed (and counted), never the caller slowed. */
  maxQueued?: number;
  /** A receipt not stored within this time is counted as failed and its slot freed. */
  taskTimeoutMs?: number;
  /**
   * Whether the agent wants receipts (its `emit_receipts`); asked inside the deferred task, so
   * the lookup never lands on the call path. Absent → every agent.
   */
  wants?: (tenantId: string, agentId: string) => Promise<boolean>;
};

/**
 * Emits receipts off the call path, fail-open: work is deferred to a later turn of the event loop,
 * runs with bounded concurrency, and every failure (signing, storing, time-out, shedding) is
 * counted in `gw.receipts.failures` and logged by class, never raised to the call.
 */
export function createReceiptEmitter(opts: EmitterOptions): ReceiptEmitter {
  const maxConcurrent = opts.maxConcurrent ?? 16;
  const maxQueued = opts.maxQueued ?? 10_000;
  const taskTimeoutMs = opts.taskTimeoutMs ?? 10_000;
  const queue: Array<() => Promise<void>> = [];
  let running = 0;
  let scheduled = false;
  const idle = new Set<() => void>();

  const failed = (reason: string, err?: unknown) => {
    recordReceiptFailure();
    // The class only: lower layers' messages may carry internal detail.
    opts.logger.warn({ reason, err: err instanceof Error ? err.name : undefined }, "receipt not emitted");
  };

  const settle = () => {
    if (running === 0 && queue.length === 0) for (const f of idle) f();
  };

  const runOne = (task: () => Promise<void>) => {
    running++;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), taskTimeoutMs);
      timer.unref();
    });
    let outcome: Promise<unknown>;
    try {
      outcome = task();
    } catch (e) {
      outcome = Promise.reject(e);
    }
    Promise.race([outcome, timeout])
      .then(
        (r) => {
          if (r === "timeout") failed("timeout");
        },
        (e: unknown) => failed("error", e),
      )
      .finally(() => {
        clearTimeout(timer);
        running--;
        pump();
        settle();
      });
  };

  const pump = () => {
    while (running < maxConcurrent && queue.length > 0) runOne(queue.shift() as () => Promise<void>);
  };

  const submit = (task: () => Promise<void>) => {
    if (queue.length >= maxQueued) {
      failed("shed");
      return;
    }
    queue.push(task);
    if (!scheduled) {
      scheduled = true;
      // Signing is CPU work: never on the stack of the call that produced the event.
      setImmediate(() => {
        scheduled = false;
        pump();
      });
    }
  };

  const emit = (
    tenantId: string,
    subject: string,
    body: {
      action: ReceiptPayload["action"];
      agent_id: string;
      status: string;
      digests?: ReceiptPayload["digests"] | undefined;
      settlement?: ReceiptPayload["settlement"] | undefined;
      binding?: ReceiptPayload["binding"] | undefined;
      approval_id?: string | undefined;
    },
  ) =>
    submit(async () => {
      if (opts.wants && !(await opts.wants(tenantId, body.agent_id))) return;
      const artifactId = newId("rcpt");
      const signedAt = new Date();
      const payload: ReceiptPayload = {
        artifact_id: artifactId,
        actor: opts.actor,
        action: body.action,
        subject,
        tenant_id: tenantId,
        agent_id: body.agent_id,
        status: body.status,
        ...(body.digests ? { digests: body.digests } : {}),
        ...(body.settlement ? { settlement: body.settlement } : {}),
        ...(body.binding ? { binding: body.binding } : {}),
        ...(body.approval_id ? { approval_id: body.approval_id } : {}),
        signed_at: signedAt.toISOString(),
      };
      const jws = await signReceipt(opts.key, payload);
      await opts.sink.save(tenantId, {
        id: artifactId,
        subjectId: subject,
        action: body.action,
        actor: opts.actor,
        jws,
        signedAt,
      });
    });

  /** A receipt that cannot be made is counted and logged (`failed`), never thrown at the call. */
  const emitSafely: typeof emit = (...args) => {
    try {
      emit(...args);
    } catch (err) {
      failed("error", err);
    }
  };

  return {
    actor: opts.actor,
    jwks: { keys: [opts.key.publicJwk] },
    signDetached: (payload, header) => signDetached(opts.key, payload, header),
    invocation: (e) =>
      emitSafely(e.tenantId, e.invocationId, {
        action: "gateway.invocation",
        agent_id: e.agentId,
        status: e.status,
        digests: e.digests,
        binding: e.binding,
        settlement: e.settlement
          ? {
              status: e.settlement.status,
              ...(e.settlement.tx_hash ? { tx_hash: e.settlement.tx_hash } : {}),
            }
          : undefined,
      }),
    decision: (e) =>
      emitSafely(e.tenantId, e.decisionId, {
        action: "gateway.policy_decision",
        agent_id: e.agentId,
        status: e.action,
        approval_id: e.approvalId,
      }),
    drain: (timeoutMs) =>
      new Promise<void>((resolve) => {
        if (running === 0 && queue.length === 0 && !scheduled) return resolve();
        const done = () => {
          idle.delete(done);
          clearTimeout(t);
          resolve();
        };
        const t = setTimeout(done, timeoutMs);
        idle.add(done);
      }),
  };
}
