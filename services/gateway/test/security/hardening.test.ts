// @stores both: the NUL rule and hostile values reach each store's driver.
import type { TestApp } from "@gw/testkit";
import { type Recorded, recordingCaller, sweepSecrets, Tally } from "@gw/testkit/sweep";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, createAgent, pollDone, recordDone, startGateway, upstreamPool } from "../helpers.ts";

// Malformed input never gives a 5xx: NUL bytes in every string that reaches Postgres, impossible
// timestamps, odd ids; credentials with allowed_hosts at write time; no query string in any log
// line. The data plane's cases (NUL in MCP names, forged response headers, allowed_hosts at call
// time) are in services/proxy/test/hardening.test.ts.

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
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  });
  upUrl = `${up.url}/`;
});
afterAll(async () => {
  tally.print("Input hardening (400/404 expected, never 5xx)");
  if (app) await sweepSecrets(app, seen, secrets);
  await pool.closeAll();
  await app?.close();
});

describe("the NUL rule", () => {
  it("refuses a NUL in any agent field, nested keys included, naming the field", async () => {
    const agentId = await createAgent(call, { upstream_url: upUrl });
    const price = { amount: "1", asset: "USDC", network: "base", pay_to: `0x${"a".repeat(40)}` };
    const bodies: Array<[Record<string, unknown>, string]> = [
      [{ name: "a\u0000b" }, "name"],
      [{ name: "ok", description: "\u0000" }, "description"],
      [{ name: "ok", upstream_url: `${upUrl}\u0000` }, "upstream_url"],
      [{ name: "ok", credential_ref: "cred_\u0000" }, "credential_ref"],
      [{ name: "ok", mcp_protocol_version: "2025\u0000" }, "mcp_protocol_version"],
      [{ name: "ok", price: { ...price, tools: { "echo\u0000": "1" } } }, "price.tools"],
      [{ name: "ok", price: { ...price, pay_to: "0x\u0000" } }, "price.pay_to"],
      [{ name: "ok", "unknown\u0000": 1 }, "request body"],
    ];
    for (const [body, field] of bodies) {
      const post = await call("POST", "/v1/agents", body);
      tally.expectRefused("NUL in agent bodies (POST)", post, 400);
      expect(post.json.error).toContain(field);
      const { name: _n, ...patchBody } = body;
      const patch = await call("PATCH", `/v1/agents/${agentId}`, field === "name" ? body : patchBody);
      tally.expectRefused("NUL in agent bodies (PATCH)", patch, 400);
    }
  });

  it("refuses a NUL in any credential field", async () => {
    const secret = `sk-hardening-${crypto.randomUUID()}`;
    secrets.push(secret);
    const cred = await call("POST", "/v1/credentials", { name: "c", kind: "api_key", secret });
    for (const body of [
      { name: "c\u0000", kind: "bearer", secret },
      { name: "c2", kind: "bearer", secret: `${secret}\u0000` },
      { name: "c2", kind: "api_key", secret, header_name: "X-Key\u0000" },
      { name: "c2", kind: "bearer", secret, allowed_hosts: ["api.example.com\u0000"] },
      { name: "c2", kind: "bearer\u0000", secret },
    ]) {
      tally.expectRefused(
        "NUL in credential bodies (POST)",
        await call("POST", "/v1/credentials", body),
        400,
      );
      const { kind, ...rest } = body;
      const put = kind.includes("\u0000") ? body : rest;
      tally.expectRefused(
        "NUL in credential bodies (PUT)",
        await call("PUT", `/v1/credentials/${cred.json.id}`, put),
        400,
      );
    }
  });

  it("refuses a NUL or an impossible timestamp in query parameters, and odd ids in paths", async () => {
    const queries = [
      "/v1/invocations?agent_id=%00",
      "/v1/invocations?agent_id=agt_%00",
      "/v1/invocations?status=%00",
      "/v1/invocations?since=0000-01-01T00:00:00Z",
      "/v1/invocations?until=0000-12-31T23:59:59Z",
      "/v1/invocations?since=2026-02-30T00:00:00Z",
      "/v1/invocations?since=2026-01-01T24:00:00Z",
      "/v1/invocations?since=10000-01-01T00:00:00Z",
      "/v1/invocations?since=0001-01-01T00:00:00%2B01:00",
      "/v1/invocations?since=2026-01-01T00:00:00Z%00",
      `/v1/invocations?agent_id=${"a".repeat(1000)}`,
      "/v1/agents?protocol=%00",
      "/v1/agents?limit=%00",
      "/v1/agents?offset=99999999999999999999",
      "/v1/credentials?limit=1%00",
      "/v1/agents?%00=1",
    ];
    for (const q of queries) tally.expectRefused("query parameters", await call("GET", q), 400);
    for (const path of [
      "/v1/agents/%00",
      "/v1/agents/agt_%00",
      "/v1/credentials/%00",
      "/v1/invocations/%00",
      "/v1/invocations/inv_00000000-0000-0000-0000-000000000000%00",
      `/v1/agents/${"x".repeat(5000)}`,
    ]) {
      tally.expectRefused("ids in paths", await call("GET", path), 404);
    }
    for (const [method, path] of [
      ["POST", "/v1/proxy/%00"],
      ["POST", "/v1/proxy/%00/stream"],
      ["GET", "/v1/proxy/%00/invocations/%00"],
    ] as const) {
      tally.expectRefused(
        "ids in proxy paths",
        await call(method, path, method === "POST" ? {} : undefined),
        404,
      );
    }
    // The earliest and latest valid instants are accepted.
    const ok = await call("GET", "/v1/invocations?since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59Z");
    expect(ok.status).toBe(200);
  });
});

describe("credential allowed_hosts", () => {
  it("refuses an agent whose upstream host is outside the list, on every write that could change it", async () => {
    const secret = `sk-hosts-${crypto.randomUUID()}`;
    secrets.push(secret);
    const scoped = await call("POST", "/v1/credentials", {
      name: "scoped",
      kind: "bearer",
      secret,
      allowed_hosts: ["API.example.com", "*.svc.example.org", "127.0.0.1"],
    });
    expect(scoped.status).toBe(201);
    expect(scoped.json.allowed_hosts).toEqual(["api.example.com", "*.svc.example.org", "127.0.0.1"]);
    const credId = scoped.json.id;
    // Allowed hosts.
    for (const url of ["https://api.example.com/v1", "https://a.b.svc.example.org/", upUrl]) {
      const res = await call("POST", "/v1/agents", { name: "ok", upstream_url: url, credential_ref: credId });
      expect(res.status, url).toBe(201);
    }
    // Outside: at creation, by changing the upstream, by changing the reference.
    const refused = (res: { status: number; json: unknown }) =>
      tally.expectRefused("allowed_hosts at write time", res, 400);
    refused(
      await call("POST", "/v1/agents", {
        name: "x",
        upstream_url: "https://evil.example.net/",
        credential_ref: credId,
      }),
    );
    refused(
      await call("POST", "/v1/agents", {
        name: "x",
        upstream_url: "https://svc.example.org/",
        credential_ref: credId,
      }),
    );
    const bound = await createAgent(call, {
      upstream_url: "https://api.example.com/",
      credential_ref: credId,
    });
    refused(
      await call("PATCH", `/v1/agents/${bound}`, { upstream_url: "https://api.example.com.evil.net/" }),
    );
    const loose = await createAgent(call, { upstream_url: "https://elsewhere.example.net/" });
    refused(await call("PATCH", `/v1/agents/${loose}`, { credential_ref: credId }));
    // Empty lists and bad patterns are refused too.
    for (const allowed_hosts of [[], ["*"], ["*.com"], ["host:443"], ["a b"], "api.example.com"]) {
      tally.expectRefused(
        "allowed_hosts malformed",
        await call("POST", "/v1/credentials", { name: "bad", kind: "bearer", secret, allowed_hosts }),
        400,
      );
    }
  });
});

describe("logs", () => {
  it("a real driver error logged by the deployment's logger shows no SQL parameters", async () => {
    const param = `sk-param-${crypto.randomUUID()}`;
    secrets.push(param);
    const err = await app.rt.store.query("select $1::uuid as id", [param]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeDefined();
    // As any module would log it: the `err` serializer keeps the safe subset only.
    app.rt.logger.error({ err }, "query failed");
    app.rt.logger.error({ failure: err }, "query failed");
    app.rt.logger.error({ err: (err as Error).message }, "query failed");
    const line = app.logs.lines.find((l) => l.includes('"msg":"query failed"')) ?? "";
    expect(line).toContain('"code":"22P02"');
    // sweepSecrets (afterAll) asserts `param` is in no log line.
    expect(app.logs.text()).not.toContain(param);
  });

  it("no access-log line carries a query string", async () => {
    const marker = `qmarker${crypto.randomUUID().replaceAll("-", "")}`;
    await call("GET", `/v1/agents?limit=5&token=${marker}`);
    await call("GET", `/v1/invocations?agent_id=${marker}`);
    await call("GET", `/healthz?x=${marker}`);
    const agentId = await createAgent(call, { upstream_url: upUrl });
    const res = await call("POST", `/v1/proxy/${agentId}/stream?x=${marker}`, { q: 1 });
    await recordDone(call, res.headers.get("x-gateway-invocation-id") as string);
    const accepted = await call("POST", `/v1/proxy/${agentId}?x=${marker}`, { q: 1 });
    await pollDone(call, agentId, accepted.json.invocation_id);
    expect(app.logs.text()).not.toContain(marker);
    expect(app.logs.text()).toContain('"path":"/v1/agents"');
  });
});
