import { findAgent } from "@gw/agents";
import { type AnswerHook, type ForwardCall, forward, isRetrySafe } from "@gw/forward";
import { type InvocationRef, jobOf, storedRequest, type TransactJob } from "@gw/invocations";
import type { CallRef, Delivery, ProcessCall } from "@gw/queue";
import type { Runtime } from "@gw/runtime";
import { annotateSpan } from "@gw/telemetry";
import { targetOf } from "@gw/upstream";
import { subjectTokenOf } from "@gw/vault";
import { type VirtualServer, virtualServer } from "@gw/virtual";

export type WorkerDeps = Pick<
  Runtime,
  "store" | "logger" | "config" | "dispatcher" | "keyring" | "invocations" | "features" | "oauth"
> & { answerHooks?: readonly AnswerHook[] };

/**
 * Whether a call whose worker died mid-call may be made again. Unlike a transient failure, the
 * upstream may well have done the work, so only the idempotent MCP methods qualify.
 */
export function mayRepeatAfterCrash(job: Pick<TransactJob, "protocol" | "mcpMethod">): boolean {
  return job.protocol === "mcp" && isRetrySafe(job);
}

/**
 * The worker's side of a transactional call: claim the invocation (pending → running; the claim
 * returns the call's stored request, since the queue carries ids only), then step 9, the forward
 * step (packages/forward), collecting the answer for the poll and recording it through the
 * lifecycle. A redelivery after a worker died mid-call finds the row running: it repeats the call
 * only when repeating is safe, and otherwise records it as failed.
 */
export function createProcessor(deps: WorkerDeps): ProcessCall {
  const { invocations } = deps;
  // Forward-step logs carry the invocation id themselves: the worker's own logger will do.
  const sink = { kind: "collect", caller: { log: deps.logger } } as const;
  return async (call, delivery) => {
    // The call's child logger, built only when something logs (most calls log nothing).
    let child: WorkerDeps["logger"] | undefined;
    const log = () => (child ??= deps.logger.child({ invocation_id: call.invocationId }));
    const ref: InvocationRef = { tenantId: call.tenantId, id: call.invocationId, agentId: call.agentId };
    const job = await claimJob(delivery, ref, deps, log);
    if (job === "skip") return;
    if (job === "gone") return invocations.fail(ref, "internal");
    if (job.protocol === "mcp" && job.mcpMethod) annotateSpan({ "mcp.method.name": job.mcpMethod });
    const virtual = job.virtual ? await virtualServerOf(job.tenantId, job.virtual, deps) : null;
    await forward(forwardCallOf(job, ref, deps, virtual), job.body, sink, deps);
  };
}

/**
 * A virtual MCP server's members as they are now (docs/mcp.md): the membership stored with the
 * call, each member agent read when the call is made, so a member deactivated or deleted since is
 * left out like on the streaming path.
 */
function virtualServerOf(
  tenantId: string,
  stored: NonNullable<TransactJob["virtual"]>,
  deps: WorkerDeps,
): Promise<VirtualServer> {
  return virtualServer(
    stored,
    async (id) => {
      const row = await findAgent(deps.store.db, tenantId, id);
      return row ? { ...row, target: row.upstreamUrl ? targetOf(row.upstreamUrl) : null } : undefined;
    },
    deps.config,
  );
}

/** The claimed job as step 9 reads it, ending its invocation through the lifecycle. */
function forwardCallOf(
  job: TransactJob,
  ref: InvocationRef,
  deps: WorkerDeps,
  virtual: VirtualServer | null,
): ForwardCall {
  const { invocations } = deps;
  return {
    tenantId: job.tenantId,
    agentId: job.agentId,
    invocationId: job.invocationId,
    method: "POST",
    target: job.upstreamUrl ? targetOf(job.upstreamUrl) : null,
    virtual,
    protocol: job.protocol,
    mcpMethod: job.mcpMethod,
    mcpRequestId: job.mcpRequestId ?? null,
    captureBodies: job.captureBodies,
    emitReceipts: job.emitReceipts,
    credentialRef: job.credentialRef,
    subjectToken: () => subjectTokenOf(job, deps.keyring),
    payment: job.payment,
    headers: job.headers,
    clientAddress: job.clientAddress,
    responseHeaders: {},
    record: invocations.handle(ref),
  };
}

/**
 * pending → running, and the call to make. A call whose row is not pending is a duplicate
 * delivery (terminal, or running under another delivery): skipped. On a redelivery after its
 * worker died, a running row is that worker's: only a call safe to repeat runs again. `gone`: the
 * row was claimed but its stored request is missing (a row from before requests were stored) or
 * is not a valid call.
 */
async function claimJob(
  delivery: Delivery,
  ref: InvocationRef,
  deps: WorkerDeps,
  log: () => WorkerDeps["logger"],
): Promise<TransactJob | "skip" | "gone"> {
  const { invocations } = deps;
  const claimed = await invocations.claim(ref);
  // A stored request that is missing or is not a call this version can make: ended, not guessed at.
  if (claimed) return (claimed.body && jobOf(claimed.job, claimed.body)) || "gone";
  if (!delivery.redelivered) return "skip";
  const stored = await storedRequest(deps.store, ref.tenantId, ref.id);
  // Terminal and purged, or never stored: nothing left to run.
  if (!stored) return "skip";
  const job = jobOf(stored.job, stored.body);
  if (!job) {
    await invocations.failIfOpen(ref);
    return "skip";
  }
  if (!mayRepeatAfterCrash(job)) {
    if (await invocations.failIfOpen(ref))
      log().warn("redelivered job of a call that must not repeat: failed");
    return "skip";
  }
  return (await invocations.repeat(ref)) ? job : "skip";
}

/** A call whose job BullMQ gave up on (stalled twice), or whose processing threw: it must not stay open. */
export function createOnLost(deps: Pick<Runtime, "invocations">) {
  return (call: CallRef): Promise<boolean> =>
    deps.invocations.failIfOpen({ tenantId: call.tenantId, id: call.invocationId, agentId: call.agentId });
}
