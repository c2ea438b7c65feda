// @stores once: CEL conditions compiled and evaluated in process.
import { TEST_JWT_SECRET, type TestApp } from "@gw/testkit";
import { SignJWT } from "jose";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, pollDone, startGateway, upstreamPool } from "./helpers.ts";

let gw: TestApp;
const { up, closeAll } = upstreamPool();
let upstreamUrl: string;

beforeAll(async () => {
  gw = await startGateway();
  const u = await up((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"jsonrpc":"2.0","id":1,"result":{}}');
  });
  upstreamUrl = u.url;
});
afterAll(async () => {
  await gw?.close();
  await closeAll();
});

/** A token with extra claims (a group list), signed like the test deployment's dev tokens. */
function tokenWithClaims(tenant: string, sub: string, scopes: string[], claims: Record<string, unknown>) {
  return new SignJWT({ tenant_id: tenant, scope: scopes.join(" "), ...claims })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

const toolCall = (name: string, args: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });

async function proxy(bearer: string, agentId: string, body: string, mode: "stream" | "transact" = "stream") {
  const path = mode === "stream" ? `/v1/proxy/${agentId}/stream` : `/v1/proxy/${agentId}`;
  const r = await request(`${gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
    body,
  });
  const text = await r.body.text();
  return { status: r.statusCode, json: text ? JSON.parse(text) : null };
}

async function mcpAgent(call: Caller) {
  return createAgent(call, { upstream_url: upstreamUrl, protocol: "mcp", mcp_transport: "streamable_http" });
}

describe("PUT /v1/policy: when is compiled and type-checked", () => {
  const cases: Array<[string, string, RegExp]> = [
    ["does not parse", "call.tool == ", /^rules\.1\.when is not a valid CEL expression at character \d+$/],
    ["unknown variable", 'request.user == "x"', /^rules\.1\.when uses an unknown variable at character 1$/],
    ["unknown field", 'principal.email == "x"', /^rules\.1\.when uses an unknown field/],
    [
      "type error",
      'call.body_bytes > "x"',
      /^rules\.1\.when applies an operator or function to the wrong types/,
    ],
    ["not a bool", "call.tool", /^rules\.1\.when must evaluate to a bool, not string$/],
    ["too long", `call.tool == "${"a".repeat(2100)}"`, /^rules\.1\.when must be at most 2048 characters$/],
    [
      "loops over large lists",
      "call.arguments.a.all(x, call.arguments.b.all(y, call.arguments.c.exists(z, x == y && y == z)))",
      /^rules\.1\.when may be too costly to evaluate/,
    ],
    ["backtracking regex", 'call.tool.matches("^(a+)+$")', /^rules\.1\.when must not call matches\(\)/],
    ["not a string", "42" as string, /when/],
  ];
  for (const [what, when, message] of cases) {
    it(`refuses an expression that ${what} (400 naming rules.N.when), leaving the document unchanged`, async () => {
      const call = await caller(gw);
      const body = {
        rules: [
          { action: "allow", when: "true" },
          { action: "deny", when: what === "not a string" ? 42 : when },
        ],
      };
      const res = await call("PUT", "/v1/policy", body);
      expect(res.status).toBe(400);
      expect(Object.keys(res.json)).toEqual(["error"]);
      expect(res.json.error).toMatch(message);
      expect((await call("GET", "/v1/policy")).json.version).toBe(0);
    });
  }

  it("accepts a valid document and returns it as written", async () => {
    const call = await caller(gw);
    const rules = [
      { action: "deny", match: { methods: ["tools/call"] }, when: '"admin" in principal.scopes == false' },
    ];
    expect((await call("PUT", "/v1/policy", { rules })).status).toBe(200);
    expect((await call("GET", "/v1/policy")).json.rules).toEqual([{ ...rules[0] }]);
  });
});

describe("when on the proxy path", () => {
  it("by scope: only holders of payments:write may call transfer (both modes)", async () => {
    const call = await caller(gw, ["payments:write"]);
    const agentId = await mcpAgent(call);
    await call("PUT", "/v1/policy", {
      rules: [
        { action: "deny", match: { tools: ["transfer"] }, when: '!("payments:write" in principal.scopes)' },
      ],
    });
    const withScope = call.token;
    const without = await tokenWithClaims(call.tenant, "user-2", [], {});
    expect((await proxy(withScope, agentId, toolCall("transfer", {}))).status).toBe(200);
    expect(await proxy(without, agentId, toolCall("transfer", {}))).toEqual({
      status: 403,
      json: { error: "denied by policy" },
    });
    expect((await proxy(without, agentId, toolCall("transfer", {}), "transact")).status).toBe(403);
    const accepted = await proxy(withScope, agentId, toolCall("transfer", {}), "transact");
    expect(accepted.status).toBe(202);
    expect((await pollDone(call, agentId, accepted.json.invocation_id)).json.policy_action).toBe("allow");
  });

  it("by claim: a group claim in the token", async () => {
    const call = await caller(gw);
    const agentId = await mcpAgent(call);
    await call("PUT", "/v1/policy", {
      default: "deny",
      rules: [{ action: "allow", when: 'has(principal.claims.groups) && "sre" in principal.claims.groups' }],
    });
    const sre = await tokenWithClaims(call.tenant, "u1", [], { groups: ["sre", "dev"] });
    const dev = await tokenWithClaims(call.tenant, "u2", [], { groups: ["dev"] });
    expect((await proxy(sre, agentId, toolCall("x", {}))).status).toBe(200);
    expect((await proxy(dev, agentId, toolCall("x", {}))).status).toBe(403);
    expect((await proxy(call.token, agentId, toolCall("x", {}))).status).toBe(403);
  });

  it("by argument: no transfer above 100, no path under /etc; an evaluation error decides on_error", async () => {
    const call = await caller(gw);
    const agentId = await mcpAgent(call);
    await call("PUT", "/v1/policy", {
      on_error: "warn",
      rules: [
        { action: "deny", match: { tools: ["transfer"] }, when: "call.arguments.amount > 100" },
        { action: "deny", when: 'has(call.arguments.path) && call.arguments.path.startsWith("/etc")' },
      ],
    });
    expect((await proxy(call.token, agentId, toolCall("transfer", { amount: 100 }))).status).toBe(200);
    expect((await proxy(call.token, agentId, toolCall("transfer", { amount: 100.5 }))).status).toBe(403);
    expect((await proxy(call.token, agentId, toolCall("read", { path: "/etc/shadow" }))).status).toBe(403);
    expect((await proxy(call.token, agentId, toolCall("read", { path: "/home/me" }))).status).toBe(200);
    // amount missing: rule 1 cannot be evaluated → on_error (warn), matched rule "", reason names it.
    expect((await proxy(call.token, agentId, toolCall("transfer", { to: "x" }))).status).toBe(200);
    // A warned stream's decision is written with its record, after the answer.
    let d: unknown;
    for (let i = 0; i < 200 && d === undefined; i++) {
      d = (await call("GET", "/v1/policy/decisions?action=warn")).json.data[0];
      if (d === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    expect(d).toMatchObject({ matched_rule: "", reason: "rule 1: condition could not be evaluated" });
  });

  it("huge or deep arguments never hang or 5xx: the condition decides on_error", async () => {
    const call = await caller(gw);
    const agentId = await mcpAgent(call);
    await call("PUT", "/v1/policy", {
      rules: [{ action: "allow", when: 'call.arguments.items.all(x, x.startsWith("ok"))' }],
    });
    const many = { items: Array.from({ length: 50_000 }, () => "ok") };
    expect(await proxy(call.token, agentId, toolCall("t", many))).toEqual({
      status: 403,
      json: { error: "denied by policy" },
    });
    const fine = { items: Array.from({ length: 1_000 }, () => "ok") };
    expect((await proxy(call.token, agentId, toolCall("t", fine))).status).toBe(200);
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"items":${"[".repeat(5000)}${"]".repeat(5000)}}}}`;
    expect((await proxy(call.token, agentId, deep)).status).toBe(403);
  });
});
