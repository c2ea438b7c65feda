// @stores once: OTLP export; nothing read from the store.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { newTenant, startUpstream, token } from "@gw/testkit";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { spawnGateway } from "./helpers.ts";

describe("OpenTelemetry export", () => {
  it("exports server and upstream client spans and metrics, with no token or secret in them", async () => {
    // A local OTLP/HTTP collector that keeps every payload it is sent.
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
    const upstream = await startUpstream((_req, res) => res.end("ok"));
    const secret = `sk-live-${Math.random().toString(36).slice(2)}-do-not-export`;
    const { child, url: base } = await spawnGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_SERVICE_NAME: "gw-test",
    });
    try {
      const tenant = newTenant();
      const bearer = await token(tenant);
      const headers = { authorization: `Bearer ${bearer}`, "content-type": "application/json" };
      const post = async (path: string, body: unknown) => {
        const res = await request(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
        return (await res.body.json()) as { id: string };
      };
      const cred = await post("/v1/credentials", { name: "k", kind: "bearer", secret });
      const agent = await post("/v1/agents", {
        name: "a",
        upstream_url: upstream.url,
        credential_ref: cred.id,
      });
      const res = await request(`${base}/v1/proxy/${agent.id}/stream`, {
        method: "POST",
        headers,
        body: "{}",
      });
      expect(res.statusCode).toBe(200);
      await res.body.text();
      expect(upstream.received[0]?.headers.authorization).toBe(`Bearer ${secret}`);

      const auditor = { authorization: `Bearer ${await token(tenant, "auditor", ["audit:read"])}` };
      const audit = (await request(`${base}/v1/audit`, { headers: auditor })).body;
      const events = ((await audit.json()) as { data: Array<Record<string, string>> }).data;
      const created = events.find((e) => e.action === "credential.create");
      expect(created).toBeDefined();

      child.kill("SIGTERM"); // shutdown flushes the exporters
      const [code] = await once(child, "exit");
      expect(code).toBe(0);

      const traces = payloads.filter((p) => p.path === "/v1/traces").map((p) => p.body);
      const metrics = payloads.filter((p) => p.path === "/v1/metrics").map((p) => p.body);
      const logRecords = payloads.filter((p) => p.path === "/v1/logs").map((p) => p.body);
      const all = traces.join("\n");
      expect(all).toContain("gw-test");
      // A server span per request, named by route, and a client span for the upstream call in
      // the same trace.
      expect(all).toContain('"name":"POST /v1/proxy/:id/stream"');
      expect(all).toContain('"name":"POST /v1/credentials"');
      expect(all).toContain(`"url.full","value":{"stringValue":"${upstream.url}/"}`);
      expect(metrics.join("\n")).toContain("gw.proxy.calls");
      // Each control-plane write's audit event is a log record: the credential's creation
      // carries its action, actor, resource id and digest, and its secret by name only.
      const logs = logRecords.join("\n");
      expect(logs).toContain('"stringValue":"audit"');
      expect(logs).toContain("gw.audit");
      for (const [key, value] of [
        ["audit.action", "credential.create"],
        ["audit.actor", created?.actor],
        ["audit.resource_id", cred.id],
        ["audit.digest", created?.digest],
      ]) {
        expect(logs).toContain(`{"key":"${key}","value":{"stringValue":"${value}"}}`);
      }
      for (const body of [...traces, ...metrics, ...logRecords]) {
        expect(body).not.toContain(secret);
        expect(body).not.toContain(bearer);
      }
    } finally {
      child.kill("SIGKILL");
      collector.close();
      await upstream.close();
    }
  });
});
