import { DomainError, withinDeadline } from "@gw/core";
import { type Db, policyRepo, type Query } from "@gw/db";
import { recordPolicyDecision } from "@gw/telemetry";
import type { Dispatcher } from "undici";
import { createPolicyCache } from "./cache.ts";
import type { Decision, PolicyInput } from "./compile.ts";
import { createDecisionRecorder } from "./decisions.ts";
import { evaluatePolicy } from "./evaluate.ts";

export type RecordedDecision = Decision & { readonly id: string };

export type PolicyGate = {
  /**
   * Evaluates the call once and records the decision (denials too). Null when the tenant has no
   * policy document: nothing is evaluated or recorded then. Never throws for a deny: the caller
   * answers it (see `deniedByPolicy`).
   */
  decide: (input: PolicyInput) => Promise<RecordedDecision | null>;
  close: () => void;
};

/** The one answer to a denied call: 403, nothing created, nothing forwarded. */
export const deniedByPolicy = () => new DomainError("forbidden", "denied by policy");

/**
 * Step 6 of the pipeline as one object: the tenant's compiled policy from a short cache (policy
 * writes invalidate it through `subscribe`), evaluation, the classifier through the SSRF-guarded
 * dispatcher, and the decision record. `onDecision` runs after the record commits (receipts).
 */
export function createPolicyGate(opts: {
  db: Db;
  /** The records pool: decisions are group-committed with the other hot-path records. */
  query: Query;
  dispatcher: Dispatcher;
  cacheMs: number;
  /** Hears policy writes (see createPolicyCache). */
  subscribe?: (invalidate: (tenantId: string) => void) => () => void;
  onDecision?: (id: string, input: PolicyInput, decision: Decision) => void;
}): PolicyGate {
  const cache = createPolicyCache({
    // Bounded: with the store down the caller gets 503 in time, not a hang (docs/reliability.md).
    load: (tenantId) => withinDeadline(policyRepo.get(opts.db, tenantId)),
    ttlMs: opts.cacheMs,
    ...(opts.subscribe ? { subscribe: opts.subscribe } : {}),
  });
  const recorder = createDecisionRecorder(opts.query);
  return {
    decide: async (input) => {
      const policy = await cache.get(input.tenantId);
      if (!policy) return null;
      const decision = await evaluatePolicy(policy, input, { dispatcher: opts.dispatcher });
      recordPolicyDecision({ action: decision.action });
      // Bounded like the load: a stalled store must not hold the caller (or its in-flight slot).
      const id = await withinDeadline(recorder.record(input, decision));
      opts.onDecision?.(id, input, decision);
      return { ...decision, id };
    },
    close: cache.close,
  };
}
