// @stores once: the NUL rule and response headers on the relay.
import type { TestApp } from "@gw/testkit";
import { type Recorded, recordingCaller, sweepSecrets, Tally } from "@gw/testkit/sweep";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, createAgent, pollDone, recordDone, startGateway, upstreamPool } from "./helpers.ts";

// The data plane's share of the input hardening (the control plane's is in
// services/gateway/test/security/hardening.test.ts): a NUL in an MCP name on both proxy paths never
// gives a 5xx; upstreams cannot forge the gateway's response headers; a credential's allowed_hosts
// holds at call time. Every answer, log line and table is swept for the file's secrets at the end.

const seen: Recorded[] = [];
const tally = new Tally();
const pool = upstreamPool();
const secrets: string[] = [];
let app: TestApp;
let call: Caller;
let upUrl: string;

beforeAll(async () => {
  app = await startGateway();
  call = await recordingCaller(app, seen, { scopes: ["invocations:read_body"] });
  const up = await pool.up((_req, res) => {
    res.writeHead(200, {
      "content-type": "application/json",
      "x-gateway-invocation-id": "inv_forged",
      "x-gateway-policy-warning": "forged",
      "X-Gateway-Anything": "forged",
      "x-payment-response": "forged",
      "payment-response": "forged",
      "x-upstream": "kept",
    });
    res.end('{"ok":true}');
  });
  upUrl = `${up.url}/`;
});
afterAll(async () => {
  tally.print("Data-plane hardening (400 expected, never 5xx)");
  if (app) await sweepSecrets(app, seen, secrets);
  await pool.closeAll();
  await app?.close();
});

describe("the NUL rule", () => {
  it("refuses a NUL in an MCP method or tool name on both proxy paths", async () => {
    const agentId = await createAgent(call, {
      upstream_url: upUrl,
      protocol: "mcp",
      mcp_transport: "streamable_http",
    });
    for (const body of [
      { jsonrpc: "2.0", id: 1, method: "tools/\u0000list" },
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo\u0000", arguments: {} } },
      { jsonrpc: "2.0", method: "notifications/\u0000" },
    ]) {
      const headers = { accept: "application/json, text/event-stream" };
      tally.expectRefused("NUL in MCP names", await call("POST", `/v1/proxy/${agentId}`, body, headers), 400);
      tally.expectRefused(
        "NUL in MCP names",
        await call("POST", `/v1/proxy/${agentId}/stream`, body, headers),
        400,
      );
    }
  });
});

describe("response headers", () => {
  it("an upstream cannot set the gateway's own headers on the caller's response", async () => {
    const agentId = await createAgent(call, { upstream_url: upUrl });
    const res = await call("POST", `/v1/proxy/${agentId}/stream`, { q: 1 });
    expect(res.status).toBe(200);
    const id = res.headers.get("x-gateway-invocation-id");
    expect(id).toMatch(/^inv_/);
    expect(res.headers.get("x-gateway-policy-warning")).toBeNull();
    expect(res.headers.get("x-gateway-anything")).toBeNull();
    expect(res.headers.get("x-payment-response")).toBeNull();
    expect(res.headers.get("payment-response")).toBeNull();
    expect(res.headers.get("x-upstream")).toBe("kept");
    for (const h of [
      "x-gateway-invocation-id",
      "x-gateway-policy-warning",
      "x-payment-response",
      "payment-response",
    ]) {
      tally.add("forged response headers", !(res.headers.get(h) ?? "").includes("forged"));
    }
    await recordDone(call, id as string);
    const accepted = await call("POST", `/v1/proxy/${agentId}`, { q: 2 });
    const done = await pollDone(call, agentId, accepted.json.invocation_id);
    expect(JSON.stringify(done.json)).not.toContain("forged");
  });

  it("a tenant id using every allowed character reaches the upstream (no 502 from header encoding)", async () => {
    const odd = await recordingCaller(app, seen, { tenant: "Acme.eu:prod@x-9" });
    const agentId = await createAgent(odd, { upstream_url: upUrl });
    const res = await odd("POST", `/v1/proxy/${agentId}/stream`, { q: 1 });
    expect(res.status).toBe(200);
    await recordDone(odd, res.headers.get("x-gateway-invocation-id") as string);
  });
});

describe("credential allowed_hosts", () => {
  it("a credential narrowed after the agent was written is never sent to the old host", async () => {
    const received: string[] = [];
    const up = await pool.up((req, res) => {
      received.push(String(req.headers.authorization ?? ""));
      res.end("{}");
    });
    const secret = `sk-narrowed-${crypto.randomUUID()}`;
    secrets.push(secret);
    const cred = await call("POST", "/v1/credentials", { name: "narrowed", kind: "bearer", secret });
    const agentId = await createAgent(call, { upstream_url: `${up.url}/`, credential_ref: cred.json.id });
    const put = await call("PUT", `/v1/credentials/${cred.json.id}`, {
      secret,
      allowed_hosts: ["api.example.com"],
    });
    expect(put.status).toBe(200);
    const res = await call("POST", `/v1/proxy/${agentId}/stream`, { q: 1 });
    expect(res.status).toBe(502);
    const rec = await recordDone(call, res.headers.get("x-gateway-invocation-id") as string);
    expect(rec.json.error_class).toBe("credential_error");
    const accepted = await call("POST", `/v1/proxy/${agentId}`, { q: 2 });
    const done = await pollDone(call, agentId, accepted.json.invocation_id);
    expect(done.json.error_class).toBe("credential_error");
    tally.add(
      "allowed_hosts at call time (secret withheld)",
      received.every((h) => !h.includes(secret)),
    );
    expect(received.some((h) => h.includes(secret))).toBe(false);
  });
});
