// @stores once: a metric of member failures.
import { once } from "node:events";
import { client, newTenant, startMcpV2Server, startUpstream, token } from "@gw/testkit";
import { describe, expect, it } from "vitest";
import { spawnGateway, startOtlpCollector } from "./helpers.ts";

// gw.virtual.member_failures (docs/mcp.md, Members that fail; docs/operations.md, Metrics): a
// member of a virtual MCP server left out of a fan-out is counted with its agent id, the method
// and the reason, and exported with the gateway's other metrics over OTLP.

type OtlpAttribute = { key: string; value: { stringValue?: string } };
type OtlpPoint = { attributes?: OtlpAttribute[]; asInt?: string | number; asDouble?: number };
type OtlpMetric = { name: string; sum?: { dataPoints: OtlpPoint[] } };
type OtlpPayload = {
  resourceMetrics?: Array<{ scopeMetrics?: Array<{ metrics?: OtlpMetric[] }> }>;
};

/** Every data point of `name` in the last export that carries it: its attributes and its value. */
function points(payloads: string[], name: string) {
  const found = payloads
    .map((p) => JSON.parse(p) as OtlpPayload)
    .flatMap((p) => p.resourceMetrics ?? [])
    .flatMap((r) => r.scopeMetrics ?? [])
    .flatMap((s) => s.metrics ?? [])
    .filter((m) => m.name === name);
  // Counters export cumulative sums: the last export holds every count.
  const last = found.at(-1);
  return (last?.sum?.dataPoints ?? []).map((p) => ({
    attributes: Object.fromEntries((p.attributes ?? []).map((a) => [a.key, a.value.stringValue])),
    value: Number(p.asInt ?? p.asDouble),
  }));
}

describe("virtual server member failure metric", () => {
  it("exports gw.virtual.member_failures naming the member that failed, the method and the reason", async () => {
    const collector = await startOtlpCollector();
    const payloads = collector.metrics;
    const alpha = await startMcpV2Server({ name: "alpha", tools: ["t1"] });
    const garbage = await startUpstream((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end("this is not json");
    });
    const down = await startUpstream((_req, res) => res.end());
    await down.close();
    const { child, url } = await spawnGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    });
    try {
      const api = client(url, await token(newTenant()));
      const member = async (upstream: string) => {
        const res = await api("POST", "/v1/agents", { name: "m", upstream_url: upstream, protocol: "mcp" });
        expect(res.status).toBe(201);
        return res.json.id as string;
      };
      const a = await member(alpha.url);
      const g = await member(`${garbage.url}/mcp`);
      const d = await member(`${down.url}/mcp`);
      const virtual = await api("POST", "/v1/agents", {
        name: "portal",
        protocol: "mcp",
        members: [
          { agent_id: a, prefix: "a" },
          { agent_id: g, prefix: "g" },
          { agent_id: d, prefix: "d" },
        ],
      });
      expect(virtual.status).toBe(201);
      const list = await api(
        "POST",
        `/v1/proxy/${virtual.json.id}/stream`,
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "metric-test", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        },
        {
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/list",
        },
      );
      expect(list.status).toBe(200);
      expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual(["a__t1"]);

      child.kill("SIGTERM"); // shutdown flushes the exporters
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      const counted = points(payloads, "gw.virtual.member_failures");
      expect(counted).toHaveLength(2);
      expect(counted).toEqual(
        expect.arrayContaining([
          {
            attributes: { member_agent_id: g, "mcp.method.name": "tools/list", reason: "invalid_answer" },
            value: 1,
          },
          {
            attributes: { member_agent_id: d, "mcp.method.name": "tools/list", reason: "unreachable" },
            value: 1,
          },
        ]),
      );
    } finally {
      child.kill("SIGKILL");
      collector.close();
      await alpha.close();
      await garbage.close();
    }
  });
});
