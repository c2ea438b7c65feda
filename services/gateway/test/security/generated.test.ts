// @stores both: generated bodies reach each store's driver, which must refuse them without a 5xx.
import { client, type Res, type TestApp } from "@gw/testkit";
import { type Recorded, recordingCaller, sweepSecrets, Tally } from "@gw/testkit/sweep";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, createAgent, startGateway, upstreamPool } from "../helpers.ts";

// Generated bodies (fast-check) against every JSON write route: whatever arrives, the answer is
// never a 5xx, and every 4xx but 401 carries {"error": string}. Runs are bounded so the suite
// stays fast; a failure prints fast-check's seed and the shrunk body: `GW_FUZZ_SEED=<seed>` replays it.

const RUNS = Number(process.env.GW_FUZZ_RUNS ?? 60);
const SEED = process.env.GW_FUZZ_SEED ? { seed: Number(process.env.GW_FUZZ_SEED) } : {};
const seen: Recorded[] = [];
const tally = new Tally();
const pool = upstreamPool();
let app: TestApp;
let call: Caller;
let upUrl: string;
let agentId: string;
let mcpAgentId: string;
let credId: string;
let approvalId: string;

const POLICY = {
  default: "allow",
  on_error: "warn",
  rules: [
    { action: "require_approval", match: { tools: ["approve_me"] } },
    { action: "deny", when: 'has(call.arguments.path) && call.arguments.path.startsWith("/etc")' },
    { action: "warn", when: "call.arguments.all(k, k.size() < 100) && principal.claims.size() > 0" },
  ],
};

beforeAll(async () => {
  app = await startGateway();
  // With approvals:decide, so that the approve route reads the generated bodies.
  call = await recordingCaller(app, seen, { scopes: ["approvals:decide"] });
  const up = await pool.up((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end("{}"),
  );
  upUrl = `${up.url}/`;
  agentId = await createAgent(call, { upstream_url: upUrl });
  // A bucket the runs cannot drain: the generated bodies, not the rate limit, decide the answers.
  mcpAgentId = await createAgent(call, {
    upstream_url: upUrl,
    protocol: "mcp",
    mcp_transport: "streamable_http",
    rate_limit: { rps: 100_000, burst: 100_000 },
  });
  credId = (
    await call("POST", "/v1/credentials", { name: "fuzz", kind: "bearer", secret: "sk-fuzz-secret-value" })
  ).json.id;
  // The proxy bodies meet conditions that read the arguments, and a rule that holds calls for approval.
  await call("PUT", "/v1/policy", POLICY);
  const held = await call("POST", `/v1/proxy/${mcpAgentId}/stream`, {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "approve_me", arguments: { n: 1 } },
  });
  approvalId = held.json.approval_id;
  expect(approvalId).toMatch(/^apr_/);
});
afterAll(async () => {
  tally.print(
    `Generated bodies (${RUNS} runs per route and kind; "refused" = answered 4xx, none may be 5xx)`,
  );
  if (app) await sweepSecrets(app, seen, ["sk-fuzz-secret-value"]);
  await pool.closeAll();
  await app?.close();
});

/** Values chosen to break things: NULs, odd Unicode, extreme numbers, wrong types, deep nesting. */
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ maxLength: 20 }).map((s) => `${s}\u0000${s}`),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "\ud800",
    "🦄".repeat(300),
    "x".repeat(5000),
    "https://example.com/",
    "https://127.0.0.1/",
    "https://[::ffff:7f00:1]/",
    "https://host:0/",
    "http://example.com",
    "streamable_http",
    "stdio",
    "mcp",
    "http",
    "bearer",
    "api_key",
    "X-Api-Key",
    "Authorization",
    "0000-01-01T00:00:00Z",
    "agt_01890000-0000-7000-8000-000000000000",
    "cred_01890000-0000-7000-8000-000000000000",
    "1e400",
    "9".repeat(100),
    "__proto__",
    "constructor",
    "call.arguments.a.all(x, call.arguments.b.exists(y, x == y))",
    "has(call.arguments.x) && call.arguments.x > 1",
    'principal.sub + "x"',
    "1 +",
    "require_approval",
  ),
  fc.constantFrom(0, -1, -0, 1e308, -1e308, 2 ** 53 + 1, 0.0001, Number.MAX_SAFE_INTEGER, true, false, null),
  fc.constant({
    amount: "1",
    asset: "USDC",
    network: "base",
    pay_to: `0x${"a".repeat(40)}`,
    tools: { "": "1" },
  }),
  fc.constant({ rps: 1e-9, burst: 0.5 }),
  fc.constant(["*.example.com", "a\u0000b"]),
);

let n = 0;

/**
 * Bodies for one route: a valid body with up to three fields replaced by nasty values (so the
 * deep validation and the store are reached), objects of the route's field names with nasty
 * values, and sometimes any JSON at all.
 */
function bodyOf(fields: string[], valid: () => Record<string, unknown>): fc.Arbitrary<unknown> {
  const mutated = fc
    .tuple(
      fc.subarray(fields, { maxLength: Math.min(3, fields.length) }),
      fc.array(nasty, { minLength: 3, maxLength: 3 }),
    )
    .map(([keys, values]) => {
      const body = valid();
      keys.forEach((k, i) => {
        body[k] = values[i];
      });
      return body;
    });
  const keyed = fc.dictionary(fc.oneof(fc.constantFrom(...fields), fc.string({ maxLength: 12 })), nasty, {
    maxKeys: 8,
  });
  return fc.oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 3, arbitrary: keyed },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  );
}

const AGENT_FIELDS = [
  "name",
  "description",
  "upstream_url",
  "protocol",
  "mcp_transport",
  "mcp_protocol_version",
  "credential_ref",
  "price",
  "status",
  "suspended",
  "rate_limit",
  "capture_bodies",
  "emit_receipts",
];
const CREDENTIAL_FIELDS = ["name", "kind", "secret", "header_name", "allowed_hosts"];
const MCP_FIELDS = ["jsonrpc", "id", "method", "params", "result", "error"];
const POLICY_FIELDS = ["default", "on_error", "rules"];
const APPROVAL_FIELDS = ["reason"];

function check(route: string, res: Res) {
  tally.add(route, res.status >= 400);
  expect(res.status, `${route} answered ${res.status}: ${res.text.slice(0, 200)}`).toBeLessThan(500);
  if (res.status >= 400 && res.status !== 401) {
    expect(typeof res.json?.error, `${route} ${res.status} without {"error"}`).toBe("string");
  }
}

const validAgent = () => ({ name: `a${n++}`, upstream_url: upUrl });
const validCredential = () => ({ name: `c${n++}`, kind: "api_key", secret: "sk-fuzz-secret-value" });
const validMcp = () => ({
  jsonrpc: "2.0",
  id: n++,
  method: "tools/call",
  params: { name: "echo", arguments: {} },
});

const validPolicy = () => ({ ...POLICY, rules: [...POLICY.rules] });

const routes = (): Array<[string, string, string, string[], () => Record<string, unknown>]> => [
  ["POST /v1/agents", "POST", "/v1/agents", AGENT_FIELDS, validAgent],
  ["PATCH /v1/agents/{id}", "PATCH", `/v1/agents/${agentId}`, AGENT_FIELDS, validAgent],
  ["POST /v1/credentials", "POST", "/v1/credentials", CREDENTIAL_FIELDS, validCredential],
  ["PUT /v1/credentials/{id}", "PUT", `/v1/credentials/${credId}`, CREDENTIAL_FIELDS, validCredential],
  ["POST /v1/proxy/{mcp agent}", "POST", `/v1/proxy/${mcpAgentId}`, MCP_FIELDS, validMcp],
  ["POST /v1/proxy/{mcp agent}/stream", "POST", `/v1/proxy/${mcpAgentId}/stream`, MCP_FIELDS, validMcp],
  // Last: a document that parses replaces the one the proxy routes above ran against.
  ["PUT /v1/policy", "PUT", "/v1/policy", POLICY_FIELDS, validPolicy],
  [
    "POST /v1/approvals/{id}/approve",
    "POST",
    `/v1/approvals/${approvalId}/approve`,
    APPROVAL_FIELDS,
    () => ({}),
  ],
];

describe("generated bodies never give a 5xx", () => {
  it("JSON bodies shaped like each route's", async () => {
    for (const [route, method, path, fields, valid] of routes()) {
      await fc.assert(
        fc.asyncProperty(bodyOf(fields, valid), async (body) => {
          const headers = {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          };
          check(route, await call(method, path, JSON.stringify(body), headers));
        }),
        { numRuns: RUNS, ...SEED },
      );
    }
  });

  it("arbitrary bytes, with a JSON content type", async () => {
    for (const [route, method, path] of routes()) {
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
          const res = await client(app.url, call.token)(method, path, bytes, {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          });
          check(`${route} (bytes)`, res);
        }),
        { numRuns: Math.ceil(RUNS / 2), ...SEED },
      );
    }
  });
});
