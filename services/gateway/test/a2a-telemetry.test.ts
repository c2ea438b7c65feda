// @stores once: spans and metrics of A2A calls; nothing read from the store.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { client, newTenant, startA2aUpstream, token } from "@gw/testkit";
import {
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_RPC_METHOD,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
} from "@opentelemetry/semantic-conventions/incubating";
import { describe, expect, it } from "vitest";
import { spawnGateway } from "./helpers.ts";

type OtlpSpan = {
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: { stringValue?: string; intValue?: string } }>;
};
const SERVER = 2;

const attrs = (span: OtlpSpan) =>
  Object.fromEntries((span.attributes ?? []).map((a) => [a.key, a.value.stringValue ?? a.value.intValue]));

describe("A2A calls in traces (OpenTelemetry GenAI agent conventions)", () => {
  it("a SendMessage through the gateway exports an invoke_agent span with the agent, method and context, and no MCP operation metric", async () => {
    const payloads: Array<{ path: string; body: string }> = [];
    const collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        payloads.push({ path: req.url ?? "", body: Buffer.concat(chunks).toString("utf8") });
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
    const upstream = await startA2aUpstream();
    const { child, url: base } = await spawnGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      OTEL_SERVICE_NAME: "gw-a2a-trace",
    });
    try {
      const call = client(base, await token(newTenant()));
      const agent = await call("POST", "/v1/agents", {
        name: "echo-a2a",
        upstream_url: upstream.url,
        protocol: "a2a",
      });
      const agentId = agent.json.id as string;
      const message = { messageId: "m", contextId: "ctx-7", role: "ROLE_USER", parts: [{ text: "hi" }] };
      const sent = await call(
        "POST",
        `/v1/proxy/${agentId}/stream`,
        JSON.stringify({ jsonrpc: "2.0", id: "r-1", method: "SendMessage", params: { message } }),
        { "content-type": "application/json", "a2a-version": "1.0" },
      );
      expect(sent.status).toBe(200);
      child.kill("SIGTERM"); // shutdown flushes the exporters
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      const spans: OtlpSpan[] = payloads
        .filter((p) => p.path === "/v1/traces")
        .flatMap((p) =>
          (
            JSON.parse(p.body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }
          ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
        );
      const span = spans.find((s) => s.kind === SERVER && s.name === "invoke_agent echo-a2a");
      expect(span).toBeDefined();
      expect(attrs(span as OtlpSpan)).toMatchObject({
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
        [ATTR_GEN_AI_AGENT_ID]: agentId,
        [ATTR_GEN_AI_AGENT_NAME]: "echo-a2a",
        [ATTR_GEN_AI_CONVERSATION_ID]: "ctx-7",
        [ATTR_RPC_METHOD]: "SendMessage",
      });
      // MCP's server metric counts MCP calls only: an A2A call's method is no MCP operation.
      const metricNames = payloads
        .filter((p) => p.path === "/v1/metrics")
        .flatMap((p) =>
          (
            JSON.parse(p.body) as {
              resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<{ name: string }> }> }>;
            }
          ).resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((sc) => sc.metrics.map((m) => m.name))),
        );
      expect(metricNames.length).toBeGreaterThan(0);
      expect(metricNames).not.toContain("mcp.server.operation.duration");
    } finally {
      child.kill("SIGKILL");
      collector.close();
      await upstream.close();
    }
  });
});
