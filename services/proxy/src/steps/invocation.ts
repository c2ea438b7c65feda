import { conflict, DomainError } from "@gw/core";
import { ReservationTaken } from "@gw/invocations";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";
import { storedJobOf } from "../job.ts";

/**
 * Step 8: the invocation record, with the call's reservations in the same statement. The
 * transactional record is durable before the 202; a streaming record is written off the critical
 * path unless it carries reservations (a taken key must refuse the call before it is forwarded).
 * Returns when the record is safe to rely on; `opened` is the write still in flight, if any.
 */
export async function openInvocation(call: Call, deps: ProxyDeps): Promise<Call & { opened: Promise<void> }> {
  const held = call.reservations.length > 0;
  const transactional = call.mode === "transactional";
  // A transactional call's job is stored with its row: the reconciler rebuilds it from there.
  const request = transactional
    ? { job: storedJobOf(call), body: call.forward ?? Buffer.alloc(0) }
    : undefined;
  const write = deps.invocations.open(
    call.tenantId,
    {
      id: call.invocationId,
      agentId: call.agent.id,
      mode: call.mode,
      status: call.mode === "transactional" ? "pending" : "running",
      model: call.model,
      mcpMethod: call.mcp?.method ?? null,
      mcpTool: call.mcp?.tool ?? null,
      reqSize: call.forward?.length ?? null,
      startedAt: call.mode === "streaming" ? new Date() : null,
      policyAction: call.policy?.action ?? null,
      policyMatchedRule: call.policy?.matchedRule ?? null,
      paymentNetwork: call.payment?.network ?? null,
      paymentAsset: call.payment?.asset ?? null,
      paymentAmount: call.payment?.amount ?? null,
      paymentPayer: call.payment?.payer ?? null,
      paymentNonce: call.payment?.nonce ?? null,
      // The process that owns the open streaming record (the sweeper ends it if this one dies).
      instanceId: transactional ? null : deps.instanceId,
    },
    { durable: transactional, reservations: call.reservations, request },
  );
  if (call.mode === "transactional" || held) {
    await write.catch(refusal);
    return Object.assign(call, { opened: Promise.resolve() });
  }
  return Object.assign(call, { opened: write });
}

function refusal(e: unknown): never {
  if (!(e instanceof ReservationTaken)) throw e;
  if (e.kind === "verified_digest") throw conflict("authorization already used");
  throw new DomainError("payment_required", "payment verification failed");
}
