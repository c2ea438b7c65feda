import { LIMITS } from "@gw/core";
import { claimInvocation, createInvocationWriter, type InvocationUpdate, invocationRepo } from "@gw/db";
import { isRetryableMcpMethod } from "@gw/mcp";
import type { ProcessJob, TransactJob } from "@gw/queue";
import type { Runtime } from "@gw/runtime";
import { upstreamDuration } from "@gw/telemetry";
import { callUpstreamStreaming, targetOf, upstreamRequestHeaders } from "@gw/upstream";
import { CredentialError, type InjectedHeader, openCredential } from "@gw/vault";
import { answerReader, keptHeaders } from "./answer.ts";
import { capped, outcomeOf } from "./outcome.ts";

export type WorkerDeps = Pick<Runtime, "store" | "logger" | "config" | "dispatcher" | "keyring">;

/** Whether transient failures (connection errors, 502/503/504) may be retried. */
export function isRetrySafe(job: Pick<TransactJob, "protocol" | "mcpMethod">): boolean {
  return job.protocol === "http" || isRetryableMcpMethod(job.mcpMethod);
}

/**
 * Whether a call whose worker died mid-call may be made again. Unlike a transient failure, the
 * upstream may well have done the work, so only the idempotent MCP methods qualify.
 */
export function mayRepeatAfterCrash(job: Pick<TransactJob, "protocol" | "mcpMethod">): boolean {
  return job.protocol === "mcp" && isRetryableMcpMethod(job.mcpMethod);
}

/**
 * The transactional job: claim the invocation (pending → running), call the upstream with the
 * retry policy, record the outcome and the polled result. A job redelivered after a worker died
 * mid-call finds the row already running: it repeats the call only when repeating is safe, and
 * otherwise records the invocation as failed.
 */
export function createProcessor(deps: WorkerDeps): ProcessJob {
  const { db } = deps.store;
  const { config } = deps;
  // The final write of each job, group-committed with the other jobs finishing meanwhile.
  const writer = createInvocationWriter(deps.store.recordsQuery);
  return async (job) => {
    const log = deps.logger.child({ invocation_id: job.invocationId });
    const claimed = await claimInvocation(deps.store.recordsQuery, job.tenantId, job.invocationId);
    if (!claimed) {
      const row = await invocationRepo.get(db, job.tenantId, job.invocationId);
      if (row?.status !== "running") return; // unknown or already terminal: a duplicate delivery
      if (!mayRepeatAfterCrash(job)) {
        log.warn("redelivered job of a call that must not repeat: recording it as failed");
        await finish(job, { status: "failed", errorClass: "internal", completedAt: new Date() });
        return;
      }
      await invocationRepo.update(db, job.tenantId, job.invocationId, { attempts: row.attempts + 1 });
    }
    const started = performance.now();
    const body = Buffer.from(job.body, "base64");

    // The credential is opened just in time and lives only as long as this call.
    let credential: InjectedHeader | undefined;
    if (job.credentialRef) {
      try {
        credential = await openCredential({
          db,
          keyring: deps.keyring,
          tenantId: job.tenantId,
          credentialId: job.credentialRef,
        });
      } catch (e) {
        if (!(e instanceof CredentialError)) throw e;
        log.warn({ reason: e.reason }, "credential could not be opened");
        await finish(job, {
          status: "failed",
          errorClass: "credential_error",
          latencyMs: Math.round(performance.now() - started),
          reqSize: body.length,
          completedAt: new Date(),
        });
        return;
      }
    }
    const headers = upstreamRequestHeaders(job.headers, {
      invocationId: job.invocationId,
      agentId: job.agentId,
      tenantId: job.tenantId,
      keepContentLength: false,
      credential,
    });

    const result = await callUpstreamStreaming(
      {
        dispatcher: deps.dispatcher,
        target: targetOf(job.upstreamUrl),
        headers,
        body,
        retry: {
          retries: config.GW_UPSTREAM_RETRIES,
          baseMs: config.GW_RETRY_BASE_MS,
          retryable: isRetrySafe(job),
        },
        timeoutMs: config.GW_TRANSACT_TIMEOUT_MS,
      },
      answerReader(job),
    );
    const latencyMs = Math.round(performance.now() - started);
    upstreamDuration.record(latencyMs, { mode: "transactional" });

    const update: InvocationUpdate = {
      ...outcomeOf(result),
      latencyMs,
      reqSize: body.length,
      attempts: result.attempts,
      completedAt: new Date(),
    };
    let stored: Parameters<typeof invocationRepo.update>[4];
    if (result.kind === "answer") update.upstreamStatus = result.status;
    if (result.kind === "answer" && result.body.ok) {
      const { body: respBody, contentType } = result.body;
      update.respSize = respBody.length;
      stored = {
        status: result.status,
        contentType,
        headers: keptHeaders(result.headers),
        body: respBody,
        expiresAt: new Date(Date.now() + config.GW_RESULT_TTL_SECONDS * 1000),
      };
      if (job.captureBodies) update.respBody = capped(respBody, LIMITS.capturedBodyMaxBytes);
    }
    if (job.captureBodies) {
      update.bodyCaptured = true;
      update.reqBody = capped(body, LIMITS.capturedBodyMaxBytes);
    }
    await writer.update(job.tenantId, job.invocationId, update, stored);
    log.info(
      {
        status: update.status,
        error_class: update.errorClass,
        upstream_status: update.upstreamStatus,
        latency_ms: latencyMs,
      },
      "invocation finished",
    );
  };

  async function finish(job: TransactJob, set: InvocationUpdate) {
    await invocationRepo.update(db, job.tenantId, job.invocationId, set);
  }
}

/** A job BullMQ gave up on (stalled twice): the invocation must not stay open. */
export function createOnLost(deps: Pick<Runtime, "store">) {
  return async (job: TransactJob) => {
    const row = await invocationRepo.get(deps.store.db, job.tenantId, job.invocationId);
    if (row && (row.status === "pending" || row.status === "running")) {
      await invocationRepo.update(deps.store.db, job.tenantId, job.invocationId, {
        status: "failed",
        errorClass: "internal",
        completedAt: new Date(),
      });
    }
  };
}
