import { readFileSync } from "node:fs";
import { metrics } from "@opentelemetry/api";
import { DataPointType, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as m from "../src/metrics.ts";

class ManualReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

const reader = new ManualReader();
const provider = new MeterProvider({ readers: [reader] });

async function collect() {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
}

beforeAll(() => {
  metrics.setGlobalMeterProvider(provider);
  m.resetInstruments();
});
afterAll(async () => {
  await provider.shutdown();
  metrics.disable();
  m.configureMetrics({ tenantLabels: false });
  m.resetInstruments();
});

describe("metric instruments", () => {
  it("every instrument of docs/operations.md exists, with only its low-cardinality labels", async () => {
    m.configureMetrics({ tenantLabels: false });
    const tenantId = "t_secret_tenant";
    m.recordProxyCall({ mode: "transactional", outcome: "accepted", errorClass: "none", tenantId });
    m.recordAddedDuration(3, { mode: "streaming", tenantId });
    m.recordUpstreamDuration(40, { mode: "streaming", tenantId });
    m.recordWorkerJob({ outcome: "completed", tenantId });
    m.recordRateLimitRejection({ reason: "concurrency", tenantId });
    m.recordRateLimitFallback();
    m.recordReconciled({ status: "failed" });
    m.recordSwept({ count: 2 });
    m.recordPaymentVerification({ outcome: "valid", tenantId });
    m.recordPaymentSettlement({ outcome: "failed", tenantId });
    m.recordPolicyDecision({ action: "deny", tenantId });
    m.recordReceiptFailure({ tenantId });
    m.recordCredentialDecryptFailure({ tenantId });
    const unregister = m.registerQueueGauges("q", async () => ({
      depth: { wait: 4, delayed: 1 },
      oldestAgeSeconds: 7,
    }));
    const got = await collect();
    unregister();
    const labels = Object.fromEntries(
      got.map((x) => [x.descriptor.name, x.dataPoints.map((p) => p.attributes)]),
    );
    expect(labels).toEqual({
      "gw.proxy.calls": [{ mode: "transactional", outcome: "accepted", error_class: "none" }],
      "gw.proxy.added_duration": [{ mode: "streaming" }],
      "gw.upstream.duration": [{ mode: "streaming" }],
      "gw.worker.jobs": [{ outcome: "completed" }],
      "gw.ratelimit.rejections": [{ reason: "concurrency" }],
      "gw.ratelimit.fallback": [{}],
      "gw.invocations.reconciled": [{ status: "failed" }],
      "gw.invocations.swept": [{}],
      "gw.payment.verifications": [{ outcome: "valid" }],
      "gw.payment.settlements": [{ outcome: "failed" }],
      "gw.policy.decisions": [{ action: "deny" }],
      "gw.receipts.failures": [{}],
      "gw.credentials.decrypt_failures": [{}],
      "gw.queue.depth": [
        { queue: "q", state: "wait" },
        { queue: "q", state: "delayed" },
      ],
      "gw.queue.oldest_age": [{ queue: "q" }],
    });
    expect(JSON.stringify(got)).not.toContain(tenantId);
    const units = Object.fromEntries(got.map((x) => [x.descriptor.name, x.descriptor.unit]));
    expect(units["gw.proxy.added_duration"]).toBe("ms");
    expect(units["gw.queue.oldest_age"]).toBe("s");
  });

  it("GW_METRICS_TENANT_LABELS=true adds tenant_id to the per-call metrics", async () => {
    m.configureMetrics({ tenantLabels: true });
    m.recordRateLimitRejection({ reason: "rate", tenantId: "t_one" });
    m.recordPolicyDecision({ action: "allow", tenantId: "t_one" });
    const got = await collect();
    const rej = got.find((x) => x.descriptor.name === "gw.ratelimit.rejections");
    expect(rej?.dataPoints.map((p) => p.attributes)).toContainEqual({ reason: "rate", tenant_id: "t_one" });
    const pol = got.find((x) => x.descriptor.name === "gw.policy.decisions");
    expect(pol?.dataPoints.map((p) => p.attributes)).toContainEqual({ action: "allow", tenant_id: "t_one" });
  });
});

/**
 * The names the collector's Prometheus exporter gives an instrument (infra/otel/collector.yaml,
 * defaults of otel/opentelemetry-collector-contrib 0.120): dots → underscores, a unit suffix
 * (`{...}` annotations dropped), `_total` on counters, `_bucket/_sum/_count` on histograms.
 */
function prometheusNames(name: string, unit: string, type: DataPointType, monotonic: boolean): string[] {
  const suffix = ({ ms: "_milliseconds", s: "_seconds", By: "_bytes" } as Record<string, string>)[unit] ?? "";
  const base = name.replace(/\./g, "_") + suffix;
  if (type === DataPointType.HISTOGRAM) return ["_bucket", "_sum", "_count"].map((x) => base + x);
  return [type === DataPointType.SUM && monotonic ? `${base}_total` : base];
}

describe("MCP labels", () => {
  it("gw.virtual.member_failures names the method by the OpenTelemetry MCP convention, and the dashboard groups by that label", async () => {
    m.recordVirtualMemberFailure({ memberAgentId: "agt_m", method: "tools/call", reason: "timeout" });
    const got = await collect();
    const failures = got.find((x) => x.descriptor.name === "gw.virtual.member_failures");
    expect(failures?.dataPoints.map((p) => p.attributes)).toContainEqual({
      member_agent_id: "agt_m",
      "mcp.method.name": "tools/call",
      reason: "timeout",
    });
    const repo = new URL("../../../", import.meta.url);
    const dashboard = readFileSync(new URL("infra/grafana/dashboards/agent-gateway.json", repo), "utf8");
    const alerts = readFileSync(new URL("infra/prometheus/alerts.yml", repo), "utf8");
    // The label's Prometheus name; the project's former `mcp_method` label is gone everywhere.
    expect(dashboard).toContain("gw_virtual_member_failures_total");
    expect(dashboard).toMatch(
      /sum by \([^)]*\bmcp_method_name\b[^)]*\) \(increase\(gw_virtual_member_failures_total/,
    );
    for (const text of [dashboard, alerts]) expect(text).not.toMatch(/\bmcp_method\b/);
  });
});

describe("dashboard and alerts", () => {
  it("use only metrics the code exports, and the dashboard shows every one", async () => {
    m.configureMetrics({ tenantLabels: false });
    m.recordProxyCall({ mode: "streaming", outcome: "ok", errorClass: "none" });
    m.recordAddedDuration(1, { mode: "streaming" });
    m.recordUpstreamDuration(1, { mode: "streaming" });
    m.recordWorkerJob({ outcome: "lost" });
    m.recordRateLimitRejection({ reason: "rate" });
    m.recordRateLimitFallback();
    m.recordReconciled({ status: "failed" });
    m.recordSwept();
    m.recordPaymentVerification({ outcome: "error" });
    m.recordPaymentSettlement({ outcome: "error" });
    m.recordPolicyDecision({ action: "allow" });
    m.recordReceiptFailure();
    m.recordCredentialDecryptFailure();
    m.recordToolDrift();
    m.recordVirtualMemberFailure({ memberAgentId: "agt_x", method: "tools/list", reason: "unreachable" });
    m.recordMcpOperation(0.01, { method: "tools/call", errorType: null });
    const unregister = m.registerQueueGauges("q", async () => ({ depth: { wait: 0 }, oldestAgeSeconds: 0 }));
    const got = await collect();
    unregister();
    const exported = new Map<string, string>();
    for (const x of got) {
      const monotonic = "isMonotonic" in x ? x.isMonotonic : false;
      for (const n of prometheusNames(x.descriptor.name, x.descriptor.unit, x.dataPointType, monotonic))
        exported.set(n, x.descriptor.name);
    }
    const repo = new URL("../../../", import.meta.url);
    const dashboard = readFileSync(new URL("infra/grafana/dashboards/agent-gateway.json", repo), "utf8");
    const alerts = readFileSync(new URL("infra/prometheus/alerts.yml", repo), "utf8");
    // Ours (gw_*) and the MCP conventions' metrics (mcp_server_*, mcp_client_*); not their labels.
    const used = (text: string) => new Set(text.match(/\b(?:gw|mcp_server|mcp_client)_[a-z_]+/g) ?? []);
    for (const name of [...used(dashboard), ...used(alerts)]) expect(exported.keys()).toContain(name);
    const shown = new Set([...used(dashboard)].map((n) => exported.get(n)));
    for (const x of got) expect(shown).toContain(x.descriptor.name);
  });
});
