import { findAgent } from "@gw/agents";
import {
  type AgentLookup,
  type AnswerHooks,
  type ForwardDeps,
  forward,
  isProtocolName,
  protocolOf,
  readStoredCall,
  type StoredCall,
  type ToolSearch,
} from "@gw/forward";
import { type InvocationRef, storedRequest } from "@gw/invocations";
import type { CallRef, Delivery, ProcessCall } from "@gw/queue";
import type { Runtime } from "@gw/runtime";
import { targetOf } from "@gw/upstream";
import { subjectTokenOf } from "@gw/vault";

export type WorkerDeps = Pick<
  Runtime,
  "store" | "logger" | "config" | "dispatcher" | "keyring" | "invocations" | "features" | "oauth"
> & { answerHooks?: AnswerHooks; toolSearch?: ToolSearch };

/**
 * Whether a call whose worker died mid-call may be made again, as its protocol says (only the
 * idempotent MCP methods). A protocol this build does not know (a stored name) never repeats.
 */
export function mayRepeatAfterCrash(protocol: string | null, rpcMethod: string | null): boolean {
  return isProtocolName(protocol) && protocolOf(protocol).repeatable(rpcMethod);
}

/** A claimed call: its stored request and the bytes to forward. */
type Claimed = { call: StoredCall; body: Buffer };

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
  const forwardDeps: ForwardDeps = { ...deps, agents: storedAgents(deps) };
  return async (ref, delivery) => {
    // The call's child logger, built only when something logs (most calls log nothing).
    let child: WorkerDeps["logger"] | undefined;
    const log = () => (child ??= deps.logger.child({ invocation_id: ref.invocationId }));
    const inv: InvocationRef = { tenantId: ref.tenantId, id: ref.invocationId, agentId: ref.agentId };
    const claimed = await claimCall(delivery, inv, deps, log);
    if (claimed === "skip") return;
    if (claimed === "gone") return invocations.fail(inv, "internal");
    const { call, body } = claimed;
    // Only a protocol with methods (MCP, A2A) records one; each names it in its own conventions.
    if (call.rpcMethod) protocolOf(call.protocol).annotate(call.rpcMethod, call.rpcId ?? null);
    // What belongs to this process: the record port and the sealed caller token's opener.
    const local = {
      subjectToken: () => subjectTokenOf(call, deps.keyring),
      responseHeaders: {},
      record: invocations.handle(inv),
    };
    await forward(call, local, body, sink, forwardDeps);
  };
}

/** A virtual MCP server's member agents as the store has them when the call is made. */
function storedAgents(deps: Pick<WorkerDeps, "store">): AgentLookup {
  return async (tenantId, id) => {
    const row = await findAgent(deps.store.db, tenantId, id);
    return row ? { row, target: row.upstreamUrl ? targetOf(row.upstreamUrl) : null } : undefined;
  };
}

/**
 * pending → running, and the call to make. A call whose row is not pending is a duplicate
 * delivery (terminal, or running under another delivery): skipped. On a redelivery after its
 * worker died, a running row is that worker's: only a call safe to repeat runs again. `gone`: the
 * row was claimed but its stored request is missing (a row from before requests were stored) or
 * is not a valid call.
 */
async function claimCall(
  delivery: Delivery,
  ref: InvocationRef,
  deps: WorkerDeps,
  log: () => WorkerDeps["logger"],
): Promise<Claimed | "skip" | "gone"> {
  const { invocations } = deps;
  const claimed = await invocations.claim(ref);
  // A stored request that is missing or is not a call this version can make: ended, not guessed at.
  if (claimed) return (claimed.body && claimedOf(claimed.job, claimed.body)) || "gone";
  if (!delivery.redelivered) return "skip";
  const stored = await storedRequest(deps.store, ref.tenantId, ref.id);
  // Terminal and purged, or never stored: nothing left to run.
  if (!stored) return "skip";
  const job = claimedOf(stored.job, stored.body);
  if (!job) {
    await invocations.failIfOpen(ref);
    return "skip";
  }
  if (!mayRepeatAfterCrash(job.call.protocol, job.call.rpcMethod)) {
    if (await invocations.failIfOpen(ref))
      log().warn("redelivered job of a call that must not repeat: failed");
    return "skip";
  }
  return (await invocations.repeat(ref)) ? job : "skip";
}

function claimedOf(stored: unknown, body: Buffer): Claimed | null {
  const call = readStoredCall(stored);
  return call ? { call, body } : null;
}

/** A call whose job BullMQ gave up on (stalled twice), or whose processing threw: it must not stay open. */
export function createOnLost(deps: Pick<Runtime, "invocations">) {
  return (call: CallRef): Promise<boolean> =>
    deps.invocations.failIfOpen({ tenantId: call.tenantId, id: call.invocationId, agentId: call.agentId });
}
