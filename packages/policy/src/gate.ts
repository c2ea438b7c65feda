import { DomainError, newId, withinDeadline } from "@gw/core";
import type { Db, Query } from "@gw/db";
import { recordPolicyDecision } from "@gw/telemetry";
import type { Dispatcher } from "undici";
import { type AnswerSelection, answerRulesFor } from "./answer/select.ts";
import { bindingOf, useOrRequestApproval } from "./approvals.ts";
import { createPolicyCache, type PolicyCache } from "./cache.ts";
import type { CompiledPolicy, Decision } from "./compile.ts";
import { createDecisionRecorder, type UnrecordedDecision } from "./decisions.ts";
import { evaluatePolicy } from "./evaluate.ts";
import type { PolicyInput } from "./input.ts";
import { limitsOf, type QuotaStore, quotaDecision } from "./quota.ts";
import { policyRepo } from "./repos/policies.ts";

export type RecordedDecision = Decision & {
  readonly id: string;
  /** The approval a `require_approval` rule asked for (deny) or used (allow). */
  readonly approvalId?: string;
  /**
   * An allow or warn, not yet written: the caller writes it with the call's invocation, or through
   * `writeAlone` when the call is refused before it has one. Absent on a deny (committed already).
   */
  readonly unrecorded?: UnrecordedDecision;
  /** The answer rules that apply to the call's answer (null: none; the answer is not read). */
  readonly answer: AnswerSelection | null;
};

export type PolicyGate = {
  /**
   * Evaluates the call once. A deny is recorded before this resolves; an allow or warn comes back
   * `unrecorded`, to be written with the call's invocation (docs/policy.md "Decisions"). Null when
   * the tenant has no policy document: nothing is evaluated or recorded then. Never throws for a
   * deny: the caller answers it (see `deniedByPolicy`).
   */
  decide: (
    input: PolicyInput,
    call?: { body: () => Promise<Uint8Array> },
  ) => Promise<RecordedDecision | null>;
  /**
   * True when the tenant is known (cached) to have no policy document: `decide` would answer null
   * without evaluating anything, so the caller need not build its input nor wait for a promise.
   */
  none: (tenantId: string) => boolean;
  /** The tenant's compiled policy (cached), or null when it has none. */
  policyOf: (tenantId: string) => Promise<CompiledPolicy | null>;
  /** Writes an allow or warn whose call was refused before its invocation existed. */
  writeAlone: (d: UnrecordedDecision) => Promise<void>;
  close: () => void;
};

/** The one answer to a denied call: 403, nothing created, nothing forwarded. */
export const deniedByPolicy = () => new DomainError("forbidden", "denied by policy");

/**
 * A call refused by a spent quota counter (docs/policy.md "Quotas"): 429 with the seconds until
 * that counter's window ends (not capped at 60).
 */
export const quotaExceeded = (retryAfterSeconds: number) =>
  new DomainError("rate_limited", "quota exceeded", {
    headers: { "Retry-After": String(retryAfterSeconds) },
  });

/** A call held for a person's decision: 403 with the approval to decide (docs/policy.md "Approvals"). */
export const approvalRequired = (approvalId: string) =>
  new DomainError("forbidden", "approval required", {
    body: { error: "approval required", approval_id: approvalId },
  });

/**
 * Step 6 of the pipeline as one object: the tenant's compiled policy from a short cache (policy
 * writes invalidate it through `subscribe`), evaluation, the classifier through the SSRF-guarded
 * dispatcher, and the decision record. `onDecision` runs after the record commits (receipts): a
 * deny's before `decide` resolves, an allow's or warn's with its invocation.
 */
export function createPolicyGate(opts: {
  db: Db;
  /** The records pool: decisions are group-committed with the other hot-path records. */
  query: Query;
  /** The main pool, for approvals (read and used in the call's own time). */
  approvalsQuery: Query;
  dispatcher: Dispatcher;
  cacheMs: number;
  /** Hears policy writes (see createPolicyCache). */
  subscribe?: (invalidate: (tenantId: string) => void) => () => void;
  onDecision?: (id: string, input: PolicyInput, decision: Decision & { approvalId?: string }) => void;
  /**
   * The catalog status and digest of a called tool (docs/tools.md), asked only for a tools/call
   * when the tenant's policy names `tool_status` or a condition reads `tool.`.
   */
  toolStatus?: (
    tenantId: string,
    agentId: string,
    tool: string,
  ) => Promise<{ status: string; digest: string | null }>;
  /** The counters of `limit` rules (one count for the deployment); without it they are not counted. */
  quotas?: QuotaStore;
}): PolicyGate {
  const cache = createPolicyCache({
    // Bounded: with the store down the caller gets 503 in time, not a hang (docs/reliability.md).
    load: (tenantId) => withinDeadline(policyRepo.get(opts.db, tenantId)),
    ttlMs: opts.cacheMs,
    ...(opts.subscribe ? { subscribe: opts.subscribe } : {}),
  });
  const recorder = createDecisionRecorder(opts.query);
  return {
    decide: async (input, call) => {
      const cached = cache.peek(input.tenantId);
      const policy = cached !== undefined ? cached : await cache.get(input.tenantId);
      if (!policy) return null;
      if (policy.usesToolStatus && input.mcpTool !== null && opts.toolStatus) {
        // A cached view answers at once; the store read behind a miss carries its own deadline.
        const tool = await opts.toolStatus(input.tenantId, input.agentId, input.mcpTool);
        input = { ...input, toolStatus: tool.status, toolDigest: tool.digest };
      }
      let decision: Decision & { approvalId?: string } = await evaluatePolicy(policy, input, {
        dispatcher: opts.dispatcher,
      });
      if (decision.requiresApproval) decision = await approve(decision, input, call);
      // Limit rules charge only a call the decision lets through; none → nothing more to do.
      if (decision.action !== "deny" && policy.limits.length > 0 && opts.quotas) {
        const charged = charge(opts.quotas, policy, input, decision);
        decision = charged instanceof Promise ? await charged : charged;
      }
      recordPolicyDecision({ action: decision.action });
      if (decision.action !== "deny") {
        // Written with the call's invocation: no write of its own before the call goes on.
        const id = newId("pdec");
        const decided = decision;
        const unrecorded: UnrecordedDecision = {
          tenantId: input.tenantId,
          id,
          agentId: input.agentId,
          protocol: input.protocol,
          mcpTool: input.mcpTool,
          action: decided.action,
          matchedRule: decided.matchedRule,
          reason: decided.reason,
          at: new Date(),
          recorded: () => opts.onDecision?.(id, input, decided),
        };
        return { ...decided, id, unrecorded, answer: answerRulesFor(policy, input) };
      }
      // Bounded like the load: a stalled store must not hold the caller (or its in-flight slot).
      const id = await withinDeadline(recorder.record(input, decision));
      opts.onDecision?.(id, input, decision);
      return { ...decision, id, answer: null };
    },
    none: (tenantId) => cache.peek(tenantId) === null,
    writeAlone: (d) => withinDeadline(recorder.writeAlone(d)),
    policyOf: cache.get,
    close: cache.close,
  };

  /**
   * Charges the call to the counters of every `limit` rule that holds, all or nothing. A rule
   * whose `when` or key cannot be evaluated gives `on_error`: deny refuses the call (nothing
   * charged); warn or allow let it through without that rule's counter (warn with its reason).
   */
  function charge(
    quotas: QuotaStore,
    policy: CompiledPolicy,
    input: PolicyInput,
    decided: Decision & { approvalId?: string },
  ): Decision | Promise<Decision & { approvalId?: string }> {
    const { charges, error } = limitsOf(policy, input);
    if (error?.action === "deny") return error;
    const passed = error?.action === "warn" ? error : decided;
    if (charges.length === 0) return passed;
    // Served from this replica's leases: no promise and no await on the call's path (the common
    // case of a leased quota); otherwise the store decides, asking Redis if it must.
    if (quotas.chargeLeased?.(input.tenantId, policy.version, charges) === true) return passed;
    return quotas
      .charge(input.tenantId, policy.version, charges)
      .then((verdict) =>
        verdict.allowed
          ? passed
          : quotaDecision(
              (charges[verdict.index] as (typeof charges)[number]).rule,
              verdict.retryAfterSeconds,
            ),
      );
  }

  /** A `require_approval` rule decided: the call passes once on a used approval, else it waits. */
  async function approve(
    held: Decision,
    input: PolicyInput,
    call: { body: () => Promise<Uint8Array> } | undefined,
  ): Promise<Decision & { approvalId: string }> {
    // The body (of a non-MCP call) is read at the caller's pace; only the store's part is bounded.
    const bound = await bindingOf({
      tenantId: input.tenantId,
      agentId: input.agentId,
      sub: input.principal.sub,
      rpcMethod: input.rpcMethod,
      mcpTool: input.mcpTool,
      arguments: input.arguments,
      body: call?.body ?? (() => Promise.resolve(new Uint8Array())),
    });
    const r = await withinDeadline(useOrRequestApproval(opts.approvalsQuery, input.tenantId, bound));
    return r.used
      ? { action: "allow", matchedRule: held.matchedRule, reason: `approved ${r.id}`, approvalId: r.id }
      : { action: "deny", matchedRule: held.matchedRule, reason: "approval required", approvalId: r.id };
  }
}

/**
 * The tenants' compiled policies read from the store, cached like the gate's (the worker reads
 * them to filter tool lists it collects; docs/tools.md).
 */
export function storedPolicies(opts: {
  db: Db;
  cacheMs: number;
  subscribe?: (invalidate: (tenantId: string) => void) => () => void;
}): PolicyCache {
  return createPolicyCache({
    load: (tenantId) => withinDeadline(policyRepo.get(opts.db, tenantId)),
    ttlMs: opts.cacheMs,
    ...(opts.subscribe ? { subscribe: opts.subscribe } : {}),
  });
}
