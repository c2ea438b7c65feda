// @stores both: trace context crosses the queue (BullMQ and in-process).
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { client, mcpInitialize, newTenant, startMcpUpstream, startUpstream, token } from "@gw/testkit";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { spawnGateway } from "./helpers.ts";

type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
};
/** OTLP span kinds. */
const KIND = { SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };

describe("one trace from the caller to the upstream, across the queue", () => {
  it("a transactional call's server, send, process and upstream client spans share the caller's trace id; queue and worker metrics reach the collector", async () => {
    const payloads: Array<{ path: string; body: string }> = [];
    const collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        payloads.push({ path: req.url ?? "", body: Buffer.concat(chunks).toString("utf8") });
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
      });
    });
    await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const upstream = await startUpstream((_req, res) => res.end("done"));
    const mcpUpstream = await startMcpUpstream();
    const secret = `sk-live-${Math.random().toString(36).slice(2)}-do-not-export`;
    const body = `{"prompt":"body-${Math.random().toString(36).slice(2)}"}`;
    const { child, url: base } = await spawnGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_SERVICE_NAME: "gw-trace",
      OTEL_METRIC_EXPORT_INTERVAL: "200",
    });
    try {
      const bearer = await token(newTenant());
      const call = client(base, bearer);
      const cred = await call("POST", "/v1/credentials", { name: "k", kind: "bearer", secret });
      const agent = await call("POST", "/v1/agents", {
        name: "a",
        upstream_url: upstream.url,
        credential_ref: cred.json.id,
      });
      const agentId = agent.json.id as string;
      // The caller's own trace: everything below must continue it.
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
      const res = await request(`${base}/v1/proxy/${agentId}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${bearer}`,
          "content-type": "application/json",
          traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        },
        body,
      });
      expect(res.statusCode).toBe(202);
      const invocationId = res.headers["x-gateway-invocation-id"] as string;
      await res.body.text();
      await expect
        .poll(
          async () => (await call("GET", `/v1/proxy/${agentId}/invocations/${invocationId}`)).json.status,
          {
            timeout: 20_000,
          },
        )
        .toBe("succeeded");
      expect(upstream.received[0]?.headers.authorization).toBe(`Bearer ${secret}`);
      // An MCP transactional call in a trace of its own: its process span names the method.
      const mcpTraceId = "5bf92f3577b34da6a3ce929d0e0e4737";
      const mcpAgent = await call("POST", "/v1/agents", {
        name: "m",
        upstream_url: mcpUpstream.url,
        protocol: "mcp",
        mcp_transport: "streamable_http",
      });
      const init = await request(`${base}/v1/proxy/${mcpAgent.json.id}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${bearer}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          traceparent: `00-${mcpTraceId}-00f067aa0ba902b8-01`,
        },
        body: JSON.stringify(mcpInitialize()),
      });
      expect(init.statusCode).toBe(202);
      const mcpInvocation = ((await init.body.json()) as { invocation_id: string }).invocation_id;
      await expect
        .poll(
          async () =>
            (await call("GET", `/v1/proxy/${mcpAgent.json.id}/invocations/${mcpInvocation}`)).json.status,
          { timeout: 20_000 },
        )
        .toBe("succeeded");
      // A streaming call too: a short mixed run.
      const s = await request(`${base}/v1/proxy/${agentId}/stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${bearer}` },
        body,
      });
      await s.body.text();
      // The rest of the mixed run: a policy decision, a rate-limit rejection, a refused payment.
      expect((await call("PUT", "/v1/policy", { default: "warn" })).status).toBe(200);
      const limited = await call("POST", "/v1/agents", {
        name: "limited",
        upstream_url: upstream.url,
        rate_limit: { rps: 0.001, burst: 1 },
      });
      const codes: number[] = [];
      for (let i = 0; i < 2; i++) {
        codes.push((await call("POST", `/v1/proxy/${limited.json.id}/stream`, "x")).status);
      }
      expect(codes).toEqual([200, 429]);
      const priced = await call("POST", "/v1/agents", {
        name: "priced",
        upstream_url: upstream.url,
        price: { amount: "1000", asset: "USDC", network: "base", pay_to: `0x${"1".repeat(40)}` },
      });
      const forged = await call("POST", `/v1/proxy/${priced.json.id}/stream`, "x", {
        "x-payment": Buffer.from("not a payment").toString("base64"),
      });
      expect(forged.status).toBe(402);

      // The queue gauges are read by the periodic export while the worker runs.
      await expect
        .poll(() => payloads.some((p) => p.path === "/v1/metrics" && p.body.includes('"gw.queue.depth"')), {
          timeout: 10_000,
        })
        .toBe(true);
      child.kill("SIGTERM"); // shutdown flushes the exporters
      const [code] = await once(child, "exit");
      expect(code).toBe(0);

      const traces = payloads.filter((p) => p.path === "/v1/traces").map((p) => p.body);
      const spans: OtlpSpan[] = traces.flatMap((t) =>
        (
          JSON.parse(t) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }
        ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((sc) => sc.spans)),
      );
      const mine = spans.filter((sp) => sp.traceId === traceId);
      const one = (kind: number, name: RegExp) => {
        const found = mine.filter((sp) => sp.kind === kind && name.test(sp.name));
        expect(
          found.map((f) => f.name),
          `${name} in ${mine.map((m) => m.name).join(", ")}`,
        ).toHaveLength(1);
        return found[0] as OtlpSpan;
      };
      const server = one(KIND.SERVER, /^POST \/v1\/proxy\/:id$/);
      const send = one(KIND.PRODUCER, /^send /);
      const process = one(KIND.CONSUMER, /^process /);
      const upstreamCall = one(KIND.CLIENT, /^POST/);
      expect(server.parentSpanId).toBe("00f067aa0ba902b7");
      expect(send.parentSpanId).toBe(server.spanId);
      expect(process.parentSpanId).toBe(send.spanId);
      expect(upstreamCall.parentSpanId).toBe(process.spanId);
      expect(JSON.stringify(upstreamCall.attributes)).toContain(upstream.url);
      const mcpProcess = spans.filter(
        (sp) => sp.traceId === mcpTraceId && sp.kind === KIND.CONSUMER && /^process /.test(sp.name),
      );
      expect(mcpProcess).toHaveLength(1);
      expect(mcpProcess[0]?.attributes).toContainEqual({
        key: "mcp.method.name",
        value: { stringValue: "initialize" },
      });

      const metrics = payloads
        .filter((p) => p.path === "/v1/metrics")
        .map((p) => p.body)
        .join("\n");
      for (const name of [
        "gw.proxy.calls",
        "gw.proxy.added_duration",
        "gw.upstream.duration",
        "gw.policy.decisions",
        "gw.ratelimit.rejections",
        "gw.payment.verifications",
        "gw.worker.jobs",
        "gw.queue.depth",
        "gw.queue.oldest_age",
      ])
        expect(metrics).toContain(`"name":"${name}"`);
      for (const text of [...traces, metrics]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(bearer);
        expect(text).not.toContain(body.slice(12, 30));
      }
    } finally {
      child.kill("SIGKILL");
      collector.close();
      await upstream.close();
      await mcpUpstream.close();
    }
  });
});
