import { type InvocationHandle, type NewInvocation, ReservationTaken } from "@gw/invocations";
import { paymentFailed, pendingSettlement } from "@gw/payments";
import { subjectTokenForJob } from "@gw/vault";
import { authorizationAlreadyUsed } from "@gw/verifier";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";
import { storedJobOf } from "../job.ts";

/**
 * Step 8: the invocation record, with the call's reservations in the same statement. The
 * transactional record is durable before the 202, and so is a streaming record with reservations
 * (a taken key must refuse the call before it is forwarded). Any other streaming record is written
 * off the critical path (ADR 0006): one INSERT of its final state when the call ends within
 * `GW_STREAM_RECORD_DEFER_MS`, else a `running` row then, completed at the end. `record` ends it.
 */
export async function openInvocation(
  call: Call,
  deps: ProxyDeps,
): Promise<Call & { record: InvocationHandle }> {
  const ref = { tenantId: call.tenantId, id: call.invocationId, agentId: call.agent.id };
  const row: NewInvocation & { id: string } = {
    id: call.invocationId,
    agentId: call.agent.id,
    mode: call.mode,
    createdBy: call.principal.userId,
    status: call.mode === "transactional" ? "pending" : "running",
    model: call.model,
    mcpMethod: call.mcp?.method ?? null,
    mcpTool: call.mcp?.tool ?? null,
    reqSize: call.forward?.length ?? null,
    startedAt: call.mode === "streaming" ? new Date() : null,
    // The call's own time, also when its record is written after the fact (ADR 0006).
    createdAt: new Date(),
    policyAction: call.policy?.action ?? null,
    policyMatchedRule: call.policy?.matchedRule ?? null,
    paymentNetwork: call.payment?.network ?? null,
    paymentAsset: call.payment?.asset ?? null,
    paymentAmount: call.payment?.amount ?? null,
    paymentPayer: call.payment?.payer ?? null,
    paymentNonce: call.payment?.nonce ?? null,
    // A payment the tenant settles is pending until the facilitator answered (step 9).
    ...(call.payment?.facilitator ? { settlement: pendingSettlement(), settlementStatus: "pending" } : {}),
    // The process that owns an open streaming record (the sweeper ends it if this one dies).
    instanceId: call.mode === "streaming" ? deps.instanceId : null,
  };
  if (call.mode === "streaming" && call.reservations.length === 0) {
    const record = deps.invocations.openDeferred(row, ref, deps.config.GW_STREAM_RECORD_DEFER_MS);
    return Object.assign(call, { record });
  }
  // A transactional call's job is stored with its row: the reconciler rebuilds it from there.
  const request =
    call.mode === "transactional"
      ? {
          queue: deps.config.GW_QUEUE_NAME,
          job: { ...storedJobOf(call), subjectToken: await subjectTokenFor(call, deps) },
          body: call.forward ?? Buffer.alloc(0),
        }
      : undefined;
  await deps.invocations
    .open(call.tenantId, row, { durable: true, reservations: call.reservations, request })
    .catch(refusal);
  return Object.assign(call, { record: deps.invocations.handle(ref) });
}

/** The caller's token, sealed for the worker, when the agent's credential exchanges it (else none). */
function subjectTokenFor(call: Call, deps: ProxyDeps) {
  return subjectTokenForJob({
    db: deps.store.db,
    keyring: deps.keyring,
    oauth: deps.oauth,
    tenantId: call.tenantId,
    invocationId: call.invocationId,
    credentialId: call.agent.credentialRef,
    authorization: call.headers.authorization,
  });
}

function refusal(e: unknown): never {
  if (!(e instanceof ReservationTaken)) throw e;
  if (e.kind === "verified_digest") throw authorizationAlreadyUsed();
  throw paymentFailed();
}
