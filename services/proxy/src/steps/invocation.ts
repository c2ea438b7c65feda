import { type Forwarded, storedCallOf } from "@gw/forward";
import {
  type InvocationHandle,
  type InvocationRef,
  type NewInvocation,
  ReservationTaken,
} from "@gw/invocations";
import { offerOf, paymentFailed, pendingSettlement, toolPaymentRefused } from "@gw/payments";
import type { UnrecordedDecision } from "@gw/policy";
import { subjectTokenForJob } from "@gw/vault";
import { authorizationAlreadyUsed } from "@gw/verifier";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";
import { forwardedOf } from "../forwarded.ts";
import { timeline } from "../timeline.ts";

/**
 * Step 8: the invocation record, with the call's reservations in the same statement. The
 * transactional record is durable before the 202, and so is a streaming record with reservations
 * (a taken key must refuse the call before it is forwarded). Any other streaming record is written
 * off the critical path (ADR 0006): one INSERT of its final state when the call ends within
 * `GW_STREAM_RECORD_DEFER_MS`, else a `running` row then, completed at the end. `record` ends it.
 * `forwarded` is the call as step 9 forwards it, built here once the call is complete: the
 * transactional record stores it as its request.
 */
export function openInvocation(call: Call, deps: ProxyDeps): Opened | Promise<Opened> {
  const forwarded = forwardedOf(call);
  const ref = { tenantId: call.tenantId, id: call.invocationId, agentId: call.agent.id };
  const row: NewInvocation & { id: string } = {
    id: call.invocationId,
    agentId: call.agent.id,
    mode: call.mode,
    createdBy: call.principal.userId,
    status: call.mode === "transactional" ? "pending" : "running",
    model: call.model,
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
    // The process that owns an open streaming record (the sweeper ends it if this one dies).
    instanceId: call.mode === "streaming" ? deps.instanceId : null,
    // Spreads last: a field named after a spread costs V8 a new hidden class on every call.
    // What the protocol records of the parsed request (MCP: method and tool; A2A: method, task, context).
    ...call.speaks.recorded(call.request),
    // A payment the tenant settles is pending until the facilitator answered (step 9).
    ...(call.payment?.facilitator ? { settlement: pendingSettlement(), settlementStatus: "pending" } : {}),
  };
  // The decision travels with the row from here on (docs/policy.md "Decisions").
  const decision = call.decision ?? undefined;
  if (call.mode === "streaming" && recordedAfter(call)) {
    const deferred = (): Opened => {
      call.decision = null;
      const record = deps.invocations.openDeferred(row, ref, deps.config.GW_STREAM_RECORD_DEFER_MS, decision);
      return Object.assign(call, { record, forwarded });
    };
    // Nothing to take first (most streaming calls): no promise.
    if (call.reservations.length === 0) return deferred();
    // The keys are taken before the dial, the record is written after it (ADR 0047).
    return deps.invocations.reserve(ref, call.reservations).then(deferred, (e) => refusal(e, call));
  }
  return openDurable(call, deps, row, ref, decision, forwarded);
}

type Opened = Call & { record: InvocationHandle; forwarded: Forwarded };

/** A record durable before the call goes on: every transactional call, a stream whose payment settles first. */
async function openDurable(
  call: Call,
  deps: ProxyDeps,
  row: NewInvocation & { id: string },
  ref: InvocationRef,
  decision: UnrecordedDecision | undefined,
  forwarded: Forwarded,
): Promise<Opened> {
  // A transactional call is stored with its row: the worker and the reconciler read it from there.
  const request =
    call.mode === "transactional"
      ? {
          queue: deps.config.GW_QUEUE_NAME,
          job: storedCallOf(forwarded, await subjectTokenFor(call, deps)),
          body: call.forward ?? Buffer.alloc(0),
        }
      : undefined;
  // Past this point the decision is the statement's: written with the row, or not at all (a taken
  // reservation writes nothing, so the decision is handed back to be written alone).
  call.decision = null;
  if (request) timeline?.mark(call, "insert");
  await deps.invocations
    .open(call.tenantId, row, { durable: true, reservations: call.reservations, request, decision })
    .catch((e: unknown) => {
      if (e instanceof ReservationTaken && decision) call.decision = decision;
      return refusal(e, call);
    });
  if (request) timeline?.mark(call, "durable");
  return Object.assign(call, { record: deps.invocations.handle(ref), forwarded });
}

/**
 * Whether a streaming call's record may be written off its path (ADR 0006): always, except when
 * money moves before the dial (a payment the tenant settles), whose record is durable before the
 * facilitator is called (ADR 0047). A payment verified only takes its nonce first, alone.
 */
function recordedAfter(call: Call): boolean {
  if (call.reservations.length === 0) return true;
  return !call.payment?.facilitator && call.reservations.every((r) => r.kind === "payment_nonce");
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

function refusal(e: unknown, call: Call): never {
  if (!(e instanceof ReservationTaken)) throw e;
  if (e.kind === "verified_digest") throw authorizationAlreadyUsed();
  // A tool payment's replay is the transport's payment-required result, naming the reason.
  const payment = call.payment;
  const offer = payment?.tool ? offerOf({ ...payment, tool: payment.tool }) : null;
  if (offer)
    throw toolPaymentRefused(call.request?.id ?? null, offer, "invalid_exact_evm_nonce_already_used");
  throw paymentFailed();
}
