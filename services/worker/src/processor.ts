import { LIMITS } from "@gw/core";
import type { Facts, Failure, InvocationRef } from "@gw/invocations";
import { isRetryableMcpMethod } from "@gw/mcp";
import type { ProcessJob, TransactJob } from "@gw/queue";
import { digestOf } from "@gw/receipts";
import type { Runtime } from "@gw/runtime";
import { recordUpstreamDuration } from "@gw/telemetry";
import { callUpstreamStreaming, targetOf, upstreamRequestHeaders } from "@gw/upstream";
import { CredentialError, type InjectedHeader, openCredential, redactHeaders, redactSecret } from "@gw/vault";
import { answerReader, keptHeaders } from "./answer.ts";
import { jobBody } from "./body.ts";
import { notForwarded, settlePaid } from "./settle.ts";

export type WorkerDeps = Pick<
  Runtime,
  "store" | "logger" | "config" | "dispatcher" | "keyring" | "invocations" | "features"
>;

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
 * The transactional job, step 9 of the pipeline on the worker's side: claim the invocation
 * (pending → running), call the upstream with the retry policy, record the outcome and the polled
 * result through the lifecycle. A job redelivered after a worker died mid-call finds the row
 * running: it repeats the call only when repeating is safe, and otherwise records it as failed.
 */
export function createProcessor(deps: WorkerDeps): ProcessJob {
  const { config, invocations } = deps;
  return async (job) => {
    // The job's child logger, built only when something logs (most jobs log nothing).
    let child: WorkerDeps["logger"] | undefined;
    const log = () => (child ??= deps.logger.child({ invocation_id: job.invocationId }));
    const ref: InvocationRef = { tenantId: job.tenantId, id: job.invocationId, agentId: job.agentId };
    if (!(await claimJob(job, ref, deps, log))) return;
    const started = performance.now();
    const body = await jobBody(job, deps);
    if (!body) return invocations.fail(ref, "internal");
    const facts = (): Facts => ({
      latencyMs: Math.round(performance.now() - started),
      reqSize: body.length,
      completedAt: new Date(),
      ...(job.captureBodies ? { bodyCaptured: true, reqBody: capped(body) } : {}),
    });
    // Receipts attest the bytes forwarded each way (hashed only when a receipt may be signed).
    const digests = (resp: Buffer) =>
      deps.features.receipts && job.emitReceipts !== false
        ? { digests: { request: digestOf(body), response: digestOf(resp) } }
        : {};
    // A failure has no whole answer to attest: its receipt carries no digests.
    const fail = (failure: Failure, more: Facts = {}) =>
      invocations.fail(ref, failure, { ...facts(), ...more });

    const target = targetOf(job.upstreamUrl);
    const credential = await credentialOf(job, target.host, deps, log);
    if (credential === "refused") return fail("credential", notForwarded(job));
    // Settle-then-forward: the upstream is called only once the payment settled.
    const paid = await settlePaid(job, deps);
    if (!paid.forward) return invocations.failUnsettled(ref, { ...facts(), ...paid.facts(false) });
    const result = await forwardJob(job, deps, target, credential, body);
    recordUpstreamDuration(Math.round(performance.now() - started), { mode: "transactional" });
    if (result.kind === "failure")
      return fail(result.failure, { attempts: result.attempts, ...paid.facts(false) });
    const answered: Facts = { attempts: result.attempts, upstreamStatus: result.status };
    if (!result.body.ok) return fail(result.body.failure, { ...answered, ...paid.facts(false) });
    // An upstream that reflects the injected secret must not get it stored (DESIGN.md, Credentials).
    const secret = credential?.secret ?? "";
    const respBody = Buffer.from(redactSecret(result.body.body, secret));
    const { contentType } = result.body;
    await invocations.complete(
      ref,
      result.status,
      {
        ...facts(),
        ...answered,
        ...paid.facts(result.status < 400),
        respSize: respBody.length,
        ...(job.captureBodies ? { respBody: capped(respBody) } : {}),
      },
      {
        result: {
          status: result.status,
          contentType,
          headers: keptHeaders(redactHeaders(result.headers, secret)),
          body: respBody,
          expiresAt: new Date(Date.now() + config.GW_RESULT_TTL_SECONDS * 1000),
        },
        ...digests(respBody),
      },
    );
  };
}

/**
 * pending → running. A job that finds its row not pending is a duplicate delivery (terminal), or a
 * redelivery after its worker died (running): only a call safe to repeat runs again.
 */
async function claimJob(
  job: TransactJob,
  ref: InvocationRef,
  deps: WorkerDeps,
  log: () => WorkerDeps["logger"],
) {
  const { invocations } = deps;
  if (await invocations.claim(ref)) return true;
  if (!mayRepeatAfterCrash(job)) {
    if (await invocations.failIfOpen(ref))
      log().warn("redelivered job of a call that must not repeat: failed");
    return false;
  }
  return invocations.repeat(ref);
}

/** The upstream call with the retry policy and the transactional deadline, its answer read whole. */
function forwardJob(
  job: TransactJob,
  deps: WorkerDeps,
  target: ReturnType<typeof targetOf>,
  credential: InjectedHeader | undefined,
  body: Buffer,
) {
  const { config } = deps;
  return callUpstreamStreaming(
    {
      dispatcher: deps.dispatcher,
      target,
      headers: upstreamRequestHeaders(job.headers, {
        invocationId: job.invocationId,
        agentId: job.agentId,
        tenantId: job.tenantId,
        keepContentLength: false,
        credential,
        clientAddress: job.clientAddress,
      }),
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
}

/** The agent's credential, opened just in time for this call; `refused` when it cannot be used. */
async function credentialOf(
  job: TransactJob,
  targetHost: string,
  deps: WorkerDeps,
  log: () => WorkerDeps["logger"],
): Promise<InjectedHeader | undefined | "refused"> {
  if (!job.credentialRef) return undefined;
  try {
    return await openCredential({
      db: deps.store.db,
      keyring: deps.keyring,
      tenantId: job.tenantId,
      credentialId: job.credentialRef,
      targetHost,
    });
  } catch (e) {
    if (!(e instanceof CredentialError)) throw e;
    log().warn({ reason: e.reason }, "credential could not be opened");
    return "refused";
  }
}

/** The first bytes of a body, for capture. */
function capped(body: Buffer): Buffer {
  const max = LIMITS.capturedBodyMaxBytes;
  return body.length > max ? Buffer.from(body.subarray(0, max)) : body;
}

/** A job BullMQ gave up on (stalled twice): the invocation must not stay open. */
export function createOnLost(deps: Pick<Runtime, "invocations">) {
  return async (job: TransactJob) => {
    await deps.invocations.failIfOpen({ tenantId: job.tenantId, id: job.invocationId, agentId: job.agentId });
  };
}
