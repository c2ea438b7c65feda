import { LIMITS } from "@gw/core";
import { type Facts, type Failure, type InvocationRef, storedRequest } from "@gw/invocations";
import { isRetryableMcpMethod } from "@gw/mcp";
import { type CallRef, type Delivery, jobOf, type ProcessCall, type TransactJob } from "@gw/queue";
import { digestOf } from "@gw/receipts";
import type { Runtime } from "@gw/runtime";
import { annotateSpan, recordUpstreamDuration } from "@gw/telemetry";
import { callUpstreamStreaming, targetOf, upstreamRequestHeaders } from "@gw/upstream";
import {
  CredentialError,
  type InjectedHeader,
  openCredential,
  redactHeaders,
  redactSecret,
  subjectTokenOf,
} from "@gw/vault";
import { answerReader, keptHeaders } from "./answer.ts";
import { notForwarded, settlePaid } from "./settle.ts";

export type WorkerDeps = Pick<
  Runtime,
  "store" | "logger" | "config" | "dispatcher" | "keyring" | "invocations" | "features" | "oauth"
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
 * The transactional call, step 9 of the pipeline on the worker's side: claim the invocation
 * (pending → running; the claim returns the call's stored request, since the queue carries ids
 * only), call the upstream with the retry policy, record the outcome and the polled result through
 * the lifecycle. A redelivery after a worker died mid-call finds the row running: it repeats the
 * call only when repeating is safe, and otherwise records it as failed.
 */
export function createProcessor(deps: WorkerDeps): ProcessCall {
  const { config, invocations } = deps;
  return async (call, delivery) => {
    // The call's child logger, built only when something logs (most calls log nothing).
    let child: WorkerDeps["logger"] | undefined;
    const log = () => (child ??= deps.logger.child({ invocation_id: call.invocationId }));
    const ref: InvocationRef = { tenantId: call.tenantId, id: call.invocationId, agentId: call.agentId };
    const job = await claimJob(delivery, ref, deps, log);
    if (job === "skip") return;
    if (job === "gone") return invocations.fail(ref, "internal");
    if (job.protocol === "mcp" && job.mcpMethod) annotateSpan({ "mcp.method.name": job.mcpMethod });
    const started = performance.now();
    const body = job.body;
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
 * pending → running, and the call to make. A call whose row is not pending is a duplicate
 * delivery (terminal, or running under another delivery): skipped. On a redelivery after its
 * worker died, a running row is that worker's: only a call safe to repeat runs again. `gone`: the
 * row was claimed but its stored request is missing (a row from before requests were stored).
 */
async function claimJob(
  delivery: Delivery,
  ref: InvocationRef,
  deps: WorkerDeps,
  log: () => WorkerDeps["logger"],
): Promise<TransactJob | "skip" | "gone"> {
  const { invocations } = deps;
  const claimed = await invocations.claim(ref);
  if (claimed) return claimed.job && claimed.body ? jobOf(claimed.job, claimed.body) : "gone";
  if (!delivery.redelivered) return "skip";
  const stored = await storedRequest(deps.store, ref.tenantId, ref.id);
  // Terminal and purged, or never stored: nothing left to run.
  if (!stored) return "skip";
  const job = jobOf(stored.job, stored.body);
  if (!mayRepeatAfterCrash(job)) {
    if (await invocations.failIfOpen(ref))
      log().warn("redelivered job of a call that must not repeat: failed");
    return "skip";
  }
  return (await invocations.repeat(ref)) ? job : "skip";
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
      oauth: deps.oauth,
      subjectToken: () => subjectTokenOf(job, deps.keyring),
    });
  } catch (e) {
    if (!(e instanceof CredentialError)) throw e;
    log().warn({ reason: e.reason, detail: e.detail }, "credential could not be opened");
    return "refused";
  }
}

/** The first bytes of a body, for capture. */
function capped(body: Buffer): Buffer {
  const max = LIMITS.capturedBodyMaxBytes;
  return body.length > max ? Buffer.from(body.subarray(0, max)) : body;
}

/** A call whose job BullMQ gave up on (stalled twice), or whose processing threw: it must not stay open. */
export function createOnLost(deps: Pick<Runtime, "invocations">) {
  return (call: CallRef): Promise<boolean> =>
    deps.invocations.failIfOpen({ tenantId: call.tenantId, id: call.invocationId, agentId: call.agentId });
}
