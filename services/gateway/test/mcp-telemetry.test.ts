// @stores once: spans of MCP calls; nothing read from the store.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { client, newTenant, startMcpUpstream, token } from "@gw/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { spawnGateway } from "./helpers.ts";

type OtlpValue = { stringValue?: string; intValue?: string };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: OtlpValue }>;
};
const KIND = { SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };

function attrs(span: Pick<OtlpSpan, "attributes">): Record<string, string | undefined> {
  return Object.fromEntries(
    (span.attributes ?? []).map((a) => [a.key, a.value.stringValue ?? a.value.intValue]),
  );
}

/** A caller's own trace: 32 + 16 hex digits. */
function traceparentOf(traceId: string, spanId: string): string {
  return `00-${traceId}-${spanId}-01`;
}
const hex = (n: number) =>
  Array.from({ length: n }, () => "0123456789abcdef"[Math.floor(Math.random() * 16)]).join("");

describe("MCP calls in traces (OpenTelemetry MCP and GenAI conventions)", () => {
  it("a tools/call through the gateway exports its span by the conventions; params._meta continues the caller's trace, a bad one is ignored, the header wins; the body reaches the upstream byte for byte", async () => {
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
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const upstream = await startMcpUpstream();
    const { child, url: base } = await spawnGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_SERVICE_NAME: "gw-mcp-trace",
    });
    const clients: Client[] = [];
    try {
      const bearer = await token(newTenant());
      const call = client(base, bearer);
      const agent = await call("POST", "/v1/agents", {
        name: "m",
        upstream_url: upstream.url,
        protocol: "mcp",
        mcp_transport: "streamable_http",
      });
      const agentId = agent.json.id as string;
      const stream = `${base}/v1/proxy/${agentId}/stream`;
      const connect = async (headers: Record<string, string> = {}) => {
        const transport = new StreamableHTTPClientTransport(new URL(stream), {
          requestInit: { headers: { authorization: `Bearer ${bearer}`, ...headers } },
        });
        const c = new Client({ name: "otel-test", version: "1.0.0" });
        await c.connect(transport);
        clients.push(c);
        return { client: c, transport };
      };

      // 1. The official SDK client, its caller's trace context in params._meta only.
      const callerTrace = hex(32);
      const callerSpan = hex(16);
      const { client: sdk, transport } = await connect();
      const echoed = await sdk.callTool({
        name: "echo",
        arguments: { text: "hello" },
        _meta: { traceparent: traceparentOf(callerTrace, callerSpan), tracestate: "vendor=abc" },
      });
      expect(echoed.content).toEqual([{ type: "text", text: "hello" }]);

      // 2. A bad _meta.traceparent (all-zero parent id; upper-case hex) is ignored.
      const badTrace = hex(32);
      await sdk.callTool({
        name: "echo",
        arguments: { text: "zero" },
        _meta: { traceparent: `00-${badTrace}-0000000000000000-01` },
      });
      const upperTrace = hex(32).toUpperCase();
      await sdk.callTool({
        name: "echo",
        arguments: { text: "upper" },
        _meta: { traceparent: `00-${upperTrace}-${hex(16)}-01` },
      });

      // 3. A traceparent header wins over _meta.
      const headerTrace = hex(32);
      const headerSpan = hex(16);
      const { client: withHeader } = await connect({ traceparent: traceparentOf(headerTrace, headerSpan) });
      const ignoredMetaTrace = hex(32);
      await withHeader.callTool({
        name: "echo",
        arguments: { text: "header" },
        _meta: { traceparent: traceparentOf(ignoredMetaTrace, hex(16)) },
      });

      // 4. Byte for byte: odd spacing, key order and an escape reach the upstream as sent.
      const rawTrace = hex(32);
      const rawBody = `{ "params" : {"_meta":{"traceparent":"${traceparentOf(rawTrace, hex(16))}"},"arguments": {"text":"caf\\u00e9  x"} , "name":"echo"},"id":  "raw-1","method":"tools/call","jsonrpc":"2.0" }`;
      const sessionId = transport.sessionId as string;
      const raw = await request(stream, {
        method: "POST",
        headers: {
          authorization: `Bearer ${bearer}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
        body: rawBody,
      });
      expect(raw.statusCode).toBe(200);
      expect(await raw.body.text()).toContain("café  x");
      const received = upstream.posts("tools/call").find((r) => r.rpcId === "raw-1");
      expect(received?.raw.equals(Buffer.from(rawBody, "utf8"))).toBe(true);

      // 5. A transactional tools/call: _meta's trace continues through the queue to the worker.
      const queuedTrace = hex(32);
      const queuedSpan = hex(16);
      const queued = await request(`${base}/v1/proxy/${agentId}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${bearer}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 77,
          method: "tools/call",
          params: {
            name: "add",
            arguments: { a: 1, b: 2 },
            _meta: { traceparent: traceparentOf(queuedTrace, queuedSpan) },
          },
        }),
      });
      expect(queued.statusCode).toBe(202);
      const invocation = ((await queued.body.json()) as { invocation_id: string }).invocation_id;
      await expect
        .poll(async () => (await call("GET", `/v1/proxy/${agentId}/invocations/${invocation}`)).json.status, {
          timeout: 20_000,
        })
        .toBe("succeeded");

      for (const c of clients.splice(0)) await c.close().catch(() => {});
      child.kill("SIGTERM"); // shutdown flushes the exporters
      const [code] = await once(child, "exit");
      expect(code).toBe(0);

      const spans: OtlpSpan[] = payloads
        .filter((p) => p.path === "/v1/traces")
        .flatMap((p) =>
          (
            JSON.parse(p.body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }
          ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((sc) => sc.spans)),
        );
      const toolSpans = spans.filter((s) => s.kind === KIND.SERVER && s.name === "tools/call echo");
      const byText = (traceId: string) => toolSpans.filter((s) => s.traceId === traceId);

      // 1: one server span for the call, in the caller's trace, child of the caller's span.
      const [mine, ...more] = byText(callerTrace);
      expect(more).toEqual([]);
      expect(mine?.parentSpanId).toBe(callerSpan);
      const a = attrs(mine as OtlpSpan);
      expect(a).toMatchObject({
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "mcp.session.id": sessionId,
        "network.transport": "tcp",
        "http.route": "/v1/proxy/:id/stream",
        "http.request.method": "POST",
      });
      expect(a["mcp.protocol.version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(a["jsonrpc.request.id"]).toMatch(/^\d+$/);
      // The upstream call is a child of it: the caller's trace goes on to the MCP server.
      const upstreamCalls = spans.filter(
        (s) => s.kind === KIND.CLIENT && s.traceId === callerTrace && s.parentSpanId === mine?.spanId,
      );
      expect(upstreamCalls).toHaveLength(1);

      // 2: the bad values start no trace of theirs; the calls are still traced, in fresh traces.
      expect(spans.filter((s) => s.traceId === badTrace || s.traceId === upperTrace.toLowerCase())).toEqual(
        [],
      );
      expect(toolSpans.length).toBeGreaterThanOrEqual(5);

      // 3: the header's trace, not _meta's.
      expect(byText(headerTrace).map((s) => s.parentSpanId)).toEqual([headerSpan]);
      expect(spans.filter((s) => s.traceId === ignoredMetaTrace)).toEqual([]);

      // 4: the raw call is traced in its _meta trace, its string id as sent.
      expect(byText(rawTrace).map((s) => attrs(s)["jsonrpc.request.id"])).toEqual(["raw-1"]);

      // 5: server, send, process and upstream client spans all in the caller's trace.
      const queuedSpans = spans.filter((s) => s.traceId === queuedTrace);
      const server = queuedSpans.find((s) => s.kind === KIND.SERVER);
      expect(server?.name).toBe("tools/call add");
      expect(server?.parentSpanId).toBe(queuedSpan);
      expect(attrs(server as OtlpSpan)["http.route"]).toBe("/v1/proxy/:id");
      const process = queuedSpans.find((s) => s.kind === KIND.CONSUMER);
      expect(queuedSpans.find((s) => s.kind === KIND.PRODUCER)?.parentSpanId).toBe(server?.spanId);
      expect(attrs(process as OtlpSpan)).toMatchObject({
        "mcp.method.name": "tools/call",
        "jsonrpc.request.id": "77",
      });
      expect(queuedSpans.some((s) => s.kind === KIND.CLIENT && s.parentSpanId === process?.spanId)).toBe(
        true,
      );

      // No span carries the caller's token or a call's arguments.
      const traces = payloads
        .filter((p) => p.path === "/v1/traces")
        .map((p) => p.body)
        .join("\n");
      expect(traces).not.toContain(bearer);
      expect(traces).not.toContain("hello");

      // The conventions' server metric: every tools/call above (five relayed, one collected by the
      // worker), in seconds, by method, none failed; no tool name or session id as an attribute.
      type Point = {
        attributes?: Array<{ key: string; value: OtlpValue }>;
        count: string | number;
        sum?: number;
      };
      const points = payloads
        .filter((p) => p.path === "/v1/metrics")
        .flatMap((p) =>
          (
            JSON.parse(p.body) as {
              resourceMetrics: Array<{
                scopeMetrics: Array<{
                  metrics: Array<{ name: string; unit?: string; histogram?: { dataPoints: Point[] } }>;
                }>;
              }>;
            }
          ).resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((sc) => sc.metrics)),
        )
        .filter((m) => m.name === "mcp.server.operation.duration");
      expect(points.length).toBeGreaterThan(0);
      expect(new Set(points.map((m) => m.unit))).toEqual(new Set(["s"]));
      const calls = points
        .flatMap((m) => m.histogram?.dataPoints ?? [])
        .filter((d) => attrs(d)["mcp.method.name"] === "tools/call");
      // Cumulative: each export holds the process's count so far, so the largest is its total.
      expect(Math.max(...calls.map((d) => Number(d.count)))).toBeGreaterThanOrEqual(6);
      for (const d of calls) {
        expect(Object.keys(attrs(d))).toEqual(["mcp.method.name"]);
        expect(d.sum ?? 0).toBeGreaterThanOrEqual(0);
      }
    } finally {
      for (const c of clients) await c.close().catch(() => {});
      child.kill("SIGKILL");
      collector.close();
      await upstream.close();
    }
  }, 120_000);
});
