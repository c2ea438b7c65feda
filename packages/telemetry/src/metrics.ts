import type { Attributes, BatchObservableResult, Meter, Observable } from "@opentelemetry/api";
import { metrics } from "@opentelemetry/api";
import { ATTR_ERROR_TYPE } from "@opentelemetry/semantic-conventions";
import {
  ATTR_MCP_METHOD_NAME,
  METRIC_MCP_SERVER_OPERATION_DURATION,
} from "@opentelemetry/semantic-conventions/incubating";

/**
 * Every metric instrument of the gateway, in one place (docs/operations.md lists them with their
 * Prometheus names). Attributes are low-cardinality enums only: no agent, invocation or tenant
 * ids, no URLs. `tenant_id` is added only when GW_METRICS_TENANT_LABELS=true (configureMetrics):
 * with many tenants it multiplies every series, so it is an operator's explicit choice.
 */

/**
 * Instruments are created on first use. The metrics API has no proxy provider: an instrument made
 * before the SDK registers stays a no-op for ever, and modules load before telemetry starts.
 */
function lazy<T>(make: (meter: Meter) => T): { get: () => T; reset: () => void } {
  let made: T | undefined;
  return { get: () => (made ??= make(meter())), reset: () => (made = undefined) };
}
const meter = () => metrics.getMeter("agent-gateway");

const settings = { tenantLabels: false };

/** Set once at start-up from the configuration (GW_METRICS_TENANT_LABELS). */
export function configureMetrics(opts: { tenantLabels: boolean }): void {
  settings.tenantLabels = opts.tenantLabels;
}

/** The attributes as given, plus `tenant_id` when tenant labels are switched on. */
function withTenant(attrs: Attributes, tenantId: string | undefined): Attributes {
  return settings.tenantLabels && tenantId ? { ...attrs, tenant_id: tenantId } : attrs;
}

const counter = (name: string, description: string, unit?: string) =>
  lazy((m) => m.createCounter(name, { description, ...(unit ? { unit } : {}) }));
const histogram = (name: string, description: string) =>
  lazy((m) => m.createHistogram(name, { description, unit: "ms" }));

const instruments = {
  proxyCalls: counter("gw.proxy.calls", "Proxy calls by mode, outcome and error class", "{call}"),
  proxyAddedDuration: histogram(
    "gw.proxy.added_duration",
    "Time the gateway adds to a call: request received to upstream request sent, plus response handling",
  ),
  upstreamDuration: histogram(
    "gw.upstream.duration",
    "Upstream call duration (request sent to response end)",
  ),
  // The MCP semantic conventions' server metric: seconds, with the conventions' bucket boundaries.
  mcpServerOperationDuration: lazy((m) =>
    m.createHistogram(METRIC_MCP_SERVER_OPERATION_DURATION, {
      description: "Duration of an MCP request as the gateway served it (forward step to the answer's end)",
      unit: "s",
      advice: { explicitBucketBoundaries: [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300] },
    }),
  ),
  workerJobs: counter("gw.worker.jobs", "Transactional jobs finished by a worker, by outcome", "{job}"),
  rateLimitRejections: counter(
    "gw.ratelimit.rejections",
    "Calls refused by the per-agent rate limit or concurrency limit",
    "{call}",
  ),
  rateLimitFallback: counter(
    "gw.ratelimit.fallback",
    "Rate-limit decisions taken from the local bucket because Redis did not answer",
    "{decision}",
  ),
  invocationsReconciled: counter(
    "gw.invocations.reconciled",
    "Invocations whose final state was repaired by the reconciler",
    "{invocation}",
  ),
  invocationsSwept: counter(
    "gw.invocations.swept",
    "Invocations closed by the sweeper after their deadline",
    "{invocation}",
  ),
  paymentVerifications: counter(
    "gw.payment.verifications",
    "x402 payment verifications by outcome",
    "{payment}",
  ),
  paymentSettlements: counter("gw.payment.settlements", "x402 payment settlements by outcome", "{payment}"),
  toolDrift: counter(
    "gw.mcp.tool_drift",
    "MCP tool definitions seen drifting from their pinned definition (once per change)",
    "{tool}",
  ),
  policyDecisions: counter("gw.policy.decisions", "Policy decisions by action", "{decision}"),
  receiptFailures: counter("gw.receipts.failures", "Receipts that could not be emitted", "{receipt}"),
  virtualMemberFailures: counter(
    "gw.virtual.member_failures",
    "Member calls of a virtual MCP server that got no usable answer, by member agent, method and reason",
    "{call}",
  ),
  credentialDecryptFailures: counter(
    "gw.credentials.decrypt_failures",
    "Stored credentials that failed to decrypt (wrong or rotated key, corrupt row)",
    "{credential}",
  ),
};

// --- typed recording helpers ------------------------------------------------------------------

export type CallMode = "transactional" | "streaming";
/**
 * `error_class` of a call: the invocation's own (`timeout`, `upstream_5xx`, `upstream_4xx`,
 * `ssrf_blocked`, `credential_error`, `cancelled`, `internal`), `none` for a success or an
 * accepted transactional call. A closed set, so the label stays low-cardinality.
 */
export type ErrorClass =
  | "none"
  | "timeout"
  | "upstream_5xx"
  | "upstream_4xx"
  | "ssrf_blocked"
  | "credential_error"
  | "cancelled"
  | "internal";

/** One proxy call. `outcome` is a small enum (`accepted`, `ok`, `error`, `timeout`, `rejected`...) or an HTTP status class such as `2xx`. */
export function recordProxyCall(a: {
  mode: CallMode;
  outcome: string;
  errorClass: ErrorClass;
  tenantId?: string;
}): void {
  instruments.proxyCalls
    .get()
    .add(1, withTenant({ mode: a.mode, outcome: a.outcome, error_class: a.errorClass }, a.tenantId));
}

/** Milliseconds the gateway itself added to a call (everything but the upstream's own time). */
export function recordAddedDuration(ms: number, a: { mode: CallMode; tenantId?: string }): void {
  instruments.proxyAddedDuration.get().record(ms, withTenant({ mode: a.mode }, a.tenantId));
}

/** Milliseconds from sending the upstream request to the end of its response. */
export function recordUpstreamDuration(ms: number, a: { mode: CallMode; tenantId?: string }): void {
  instruments.upstreamDuration.get().record(ms, withTenant({ mode: a.mode }, a.tenantId));
}

/**
 * One MCP request served (`mcp.server.operation.duration`, OpenTelemetry MCP conventions):
 * `mcp.method.name`, and `error.type` (the call's error class) when it failed. The tool name is
 * left out: it is the tenant's own vocabulary, unbounded across tenants (spans carry it).
 */
export function recordMcpOperation(seconds: number, a: { method: string; errorType: string | null }): void {
  const attrs: Attributes =
    a.errorType === null
      ? { [ATTR_MCP_METHOD_NAME]: a.method }
      : { [ATTR_MCP_METHOD_NAME]: a.method, [ATTR_ERROR_TYPE]: a.errorType };
  instruments.mcpServerOperationDuration.get().record(seconds, attrs);
}

/** `completed`: the processor returned; `failed`: it threw; `lost`: the queue gave the job up (stalled twice). */
export type JobOutcome = "completed" | "failed" | "lost";
export function recordWorkerJob(a: { outcome: JobOutcome; tenantId?: string }): void {
  instruments.workerJobs.get().add(1, withTenant({ outcome: a.outcome }, a.tenantId));
}

export function recordRateLimitRejection(a: {
  reason: "rate" | "concurrency" | "quota";
  tenantId?: string;
}): void {
  instruments.rateLimitRejections.get().add(1, withTenant({ reason: a.reason }, a.tenantId));
}

export function recordRateLimitFallback(): void {
  instruments.rateLimitFallback.get().add(1);
}

/** `status`: the state the reconciler wrote (`succeeded`, `failed`, ...). */
export function recordReconciled(a: { status: string; count?: number }): void {
  instruments.invocationsReconciled.get().add(a.count ?? 1, { status: a.status });
}

export function recordSwept(a: { count?: number } = {}): void {
  instruments.invocationsSwept.get().add(a.count ?? 1);
}

/** `valid`, `invalid` (the payment was refused) or `error` (the verifier or facilitator failed). */
export type PaymentOutcome = "valid" | "invalid" | "error";
export function recordPaymentVerification(a: { outcome: PaymentOutcome; tenantId?: string }): void {
  instruments.paymentVerifications.get().add(1, withTenant({ outcome: a.outcome }, a.tenantId));
}

export type SettlementOutcome = "settled" | "failed" | "error";
export function recordPaymentSettlement(a: { outcome: SettlementOutcome; tenantId?: string }): void {
  instruments.paymentSettlements.get().add(1, withTenant({ outcome: a.outcome }, a.tenantId));
}

/** `action`: what the policy decided (`allow`, `deny`, `require_approval`, ... or `error`). */
export function recordPolicyDecision(a: { action: string; tenantId?: string }): void {
  instruments.policyDecisions.get().add(1, withTenant({ action: a.action }, a.tenantId));
}

/** A pinned MCP tool was seen with another definition, counted once per change (docs/tools.md). */
export function recordToolDrift(a: { tenantId?: string } = {}): void {
  instruments.toolDrift.get().add(1, withTenant({}, a.tenantId));
}

export function recordReceiptFailure(a: { tenantId?: string } = {}): void {
  instruments.receiptFailures.get().add(1, withTenant({}, a.tenantId));
}

export function recordCredentialDecryptFailure(a: { tenantId?: string } = {}): void {
  instruments.credentialDecryptFailures.get().add(1, withTenant({}, a.tenantId));
}

// --- queue gauges -------------------------------------------------------------------------------

/** What a queue reports when the metric reader asks. */
export type QueueSample = {
  /** Jobs waiting for a worker, by state (`wait`, `delayed`). */
  depth: Partial<Record<"wait" | "delayed", number>>;
  /** Seconds since the oldest waiting job was enqueued; 0 when nothing waits. */
  oldestAgeSeconds: number;
};

type QueueSource = { queue: string; sample: () => Promise<QueueSample> };
const queueSources = new Set<QueueSource>();

/**
 * Observable gauges `gw.queue.depth{queue,state}` and `gw.queue.oldest_age{queue}`, read from the
 * registered sources on each collection. Re-created with the other instruments on reset.
 */
const queueGauges = lazy((m) => {
  const depth = m.createObservableGauge("gw.queue.depth", {
    description: "Transactional jobs waiting for a worker",
    unit: "{job}",
  });
  const age = m.createObservableGauge("gw.queue.oldest_age", {
    description: "Age of the oldest job waiting for a worker",
    unit: "s",
  });
  const observe = async (r: BatchObservableResult) => {
    await Promise.all(
      [...queueSources].map(async (src) => {
        // A queue that cannot be sampled (Redis down) reports nothing rather than a false 0.
        const s = await src.sample().catch(() => undefined);
        if (!s) return;
        for (const [state, n] of Object.entries(s.depth)) r.observe(depth, n, { queue: src.queue, state });
        r.observe(age, s.oldestAgeSeconds, { queue: src.queue });
      }),
    );
  };
  m.addBatchObservableCallback(observe, [depth, age] as Observable[]);
  return { depth, age };
});

/**
 * Registers a queue whose depth and oldest-job age are reported as gauges. `sample` is called on
 * each metric collection; callers cache it (see the queue package) so a scrape storm cannot flood
 * Redis. Returns the unregister function.
 */
export function registerQueueGauges(queue: string, sample: () => Promise<QueueSample>): () => void {
  const src: QueueSource = { queue, sample };
  queueSources.add(src);
  queueGauges.get();
  return () => queueSources.delete(src);
}

/** Called once the SDK is registered, so instruments bind to the real provider. */
export function resetInstruments(): void {
  for (const i of Object.values(instruments)) i.reset();
  queueGauges.reset();
  if (queueSources.size > 0) queueGauges.get();
}

// --- the first three instruments' old call sites ------------------------------------------------

/** @deprecated use recordProxyCall (adds `error_class`). */
export const proxyCalls = { add: (n: number, a?: Attributes) => instruments.proxyCalls.get().add(n, a) };
/** @deprecated use recordUpstreamDuration. */
export const upstreamDuration = {
  record: (ms: number, a?: Attributes) => instruments.upstreamDuration.get().record(ms, a),
};
/** @deprecated use recordRateLimitFallback. */
export const rateLimitFallback = { add: (n: number) => instruments.rateLimitFallback.get().add(n) };

/**
 * A member of a virtual MCP server that gave no usable answer to a fan-out (it was down, timed
 * out, or answered something that is not JSON-RPC): the virtual server answered with the others.
 */
export function recordVirtualMemberFailure(a: {
  memberAgentId: string;
  method: string;
  reason: string;
}): void {
  instruments.virtualMemberFailures
    .get()
    .add(1, { member_agent_id: a.memberAgentId, [ATTR_MCP_METHOD_NAME]: a.method, reason: a.reason });
}
