// @stores both: held calls and decisions are rows that several requests race for.
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { createControlPlaneApp } from "@gw/control-plane";
import { createProxyApp } from "@gw/proxy";
import {
  client,
  eventually,
  newTenant,
  pollDone,
  serveApp,
  startUpstream,
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  type TestApp,
  token,
  type Upstream,
} from "@gw/testkit";
import { startWorker } from "@gw/worker";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployment } from "./helpers.ts";

// With DATABASE_URL and REDIS_URL: two proxy replicas, a worker and a control plane on one
// Postgres and one queue (the split deployment); without them the all-in-one gateway on the
// embedded store serves both planes.
const SPLIT = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);

let controlPlane: TestApp;
let proxyA: TestApp;
let proxyB: TestApp;
let worker: TestApp | undefined;
let upstream: Upstream;
let upstreamCalls = 0;

beforeAll(async () => {
  upstream = await startUpstream((_req, res) => {
    upstreamCalls++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [] } }));
  });
  // The proxies and the worker share one queue, so the worker runs what either proxy accepted.
  const queue = { GW_QUEUE_NAME: `test-${randomUUID()}` };
  const startProxy = () =>
    serveApp(
      (rt) => {
        const proxy = createProxyApp(rt);
        return { ...proxy, stop: () => proxy.inflight.drain() };
      },
      queue,
      "proxy",
    );
  if (SPLIT) {
    [controlPlane, proxyA, proxyB, worker] = await Promise.all([
      serveApp(createControlPlaneApp, queue, "control-plane"),
      startProxy(),
      startProxy(),
      serveApp(
        (rt) => {
          const w = startWorker(rt);
          return { fetch: () => new Response(null, { status: 404 }), stop: w.stop };
        },
        queue,
        "worker",
      ),
    ]);
  } else {
    controlPlane = await serveApp(deployment, {}, "gateway");
    proxyA = controlPlane;
    proxyB = controlPlane;
  }
});
afterAll(async () => {
  await Promise.all([...new Set([controlPlane, proxyA, proxyB, worker])].map((app) => app?.close()));
  await upstream?.close();
});

const transfer = (args: unknown) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "transfer", arguments: args },
  });

/** A tenant with an MCP agent and a policy that holds transfers above 100 for approval. */
async function setup(protocol: "mcp" | "http" = "mcp") {
  const tenant = newTenant();
  const caller = client(controlPlane.url, await token(tenant, "alice"));
  const approver = client(controlPlane.url, await token(tenant, "bob", ["approvals:decide"]));
  const created = await caller("POST", "/v1/agents", {
    name: "bank",
    upstream_url: `${upstream.url}/mcp`,
    protocol,
    ...(protocol === "mcp" ? { mcp_transport: "streamable_http" } : {}),
  });
  expect(created.status).toBe(201);
  const agentId = created.json.id as string;
  const rule =
    protocol === "mcp"
      ? { action: "require_approval", match: { tools: ["transfer"] }, when: "call.arguments.amount > 100" }
      : { action: "require_approval", match: { protocols: ["http"] } };
  expect((await caller("PUT", "/v1/policy", { rules: [rule] })).status).toBe(200);
  const aliceToken = await token(tenant, "alice");
  const call = (body: string, proxy: TestApp = proxyA, bearer = aliceToken) =>
    request(`${proxy.url}/v1/proxy/${agentId}/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
      body,
    }).then(async (r) => ({ status: r.statusCode, json: JSON.parse((await r.body.text()) || "null") }));
  /** The transactional path (POST /v1/proxy/{id}): the status, the answer and the invocation id. */
  const transact = (body: string, proxy: TestApp = proxyA) =>
    request(`${proxy.url}/v1/proxy/${agentId}`, {
      method: "POST",
      headers: { authorization: `Bearer ${aliceToken}`, "content-type": "application/json" },
      body,
    }).then(async (r) => ({
      status: r.statusCode,
      json: JSON.parse((await r.body.text()) || "null"),
      invocationId: r.headers["x-gateway-invocation-id"] as string | undefined,
    }));
  /** Alice's client on the proxy, to poll her transactional results. */
  const poller = Object.assign(client(proxyA.url, aliceToken), { tenant, token: aliceToken });
  return { tenant, agentId, caller, approver, call, transact, poller };
}

describe("require_approval on the proxy path", () => {
  it("holds the call with an approval id bound to it; repeating it gets the same id", async () => {
    const { call, caller } = await setup();
    const first = await call(transfer({ amount: 500, to: "x" }));
    expect(first.status).toBe(403);
    expect(first.json).toEqual({ error: "approval required", approval_id: expect.stringMatching(/^apr_/) });
    // Same call, key order and number spelling aside (canonical JSON), same id.
    const again = await call(
      '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"transfer","arguments":{"to":"x","amount":5e2}}}',
    );
    expect(again.json.approval_id).toBe(first.json.approval_id);
    // Another call (other arguments) gets its own; a call the condition does not hold for passes.
    const other = await call(transfer({ amount: 501, to: "x" }));
    expect(other.json.approval_id).not.toBe(first.json.approval_id);
    expect((await call(transfer({ amount: 5, to: "x" }))).status).toBe(200);

    const listed = await caller("GET", "/v1/approvals?status=pending");
    expect(listed.json.total).toBe(2);
    const item = listed.json.data.find((a: { id: string }) => a.id === first.json.approval_id);
    expect(item).toMatchObject({
      sub: "alice",
      mcp_method: "tools/call",
      mcp_tool: "transfer",
      arguments: { amount: 500, to: "x" },
      status: "pending",
      call_digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    const decisions = await caller("GET", "/v1/policy/decisions?action=deny");
    expect(decisions.json.data[0]).toMatchObject({
      action: "deny",
      matched_rule: "1",
      reason: "approval required",
    });
  });

  it("after approval the identical call passes once (allow, approved <id>), then the approval is used", async () => {
    const { call, caller, approver } = await setup();
    const held = await call(transfer({ amount: 500 }));
    const id = held.json.approval_id as string;
    const approved = await approver("POST", `/v1/approvals/${id}/approve`, { reason: "ok by me" });
    expect(approved.status).toBe(200);
    expect(approved.json).toMatchObject({ id, status: "approved", reason: "ok by me", decided_by: "bob" });
    // A different call by the same caller is not covered by it.
    expect((await call(transfer({ amount: 600 }))).status).toBe(403);
    expect((await call(transfer({ amount: 500 }))).status).toBe(200);
    // An allowed stream's decision is written with its record, after the answer.
    await expect
      .poll(async () => (await caller("GET", "/v1/policy/decisions?action=allow")).json.data[0], {
        timeout: 10_000,
      })
      .toMatchObject({ matched_rule: "1", reason: `approved ${id}` });
    expect((await caller("GET", `/v1/approvals/${id}`)).json.status).toBe("used");
    // Used: the next identical call waits for a new approval.
    const next = await call(transfer({ amount: 500 }));
    expect(next.status).toBe(403);
    expect(next.json.approval_id).not.toBe(id);
  });

  it("transactional path: held (403 with an approval id), approved, the identical call is accepted (202) and runs once; the next one is held again", async () => {
    const { transact, approver, poller, agentId } = await setup();
    const body = transfer({ amount: 700, to: "y" });
    const before = upstreamCalls;
    const held = await transact(body);
    expect(held.status).toBe(403);
    expect(held.json).toEqual({ error: "approval required", approval_id: expect.stringMatching(/^apr_/) });
    const id = held.json.approval_id as string;
    expect((await approver("GET", `/v1/approvals/${id}`)).json).toMatchObject({
      status: "pending",
      mcp_tool: "transfer",
      arguments: { amount: 700, to: "y" },
    });
    // Held again while pending: the same approval, and nothing reached the upstream.
    expect((await transact(body)).json.approval_id).toBe(id);
    expect(upstreamCalls).toBe(before);

    expect((await approver("POST", `/v1/approvals/${id}/approve`, { reason: "fine" })).status).toBe(200);
    const accepted = await transact(body, proxyB);
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(202);
    expect(accepted.invocationId).toMatch(/^inv_/);
    const done = await pollDone(poller, agentId, accepted.invocationId as string);
    expect(done.json).toMatchObject({ status: "succeeded", upstream_status: 200 });
    expect(JSON.parse(Buffer.from(done.json.response.body_b64, "base64").toString())).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [] },
    });
    expect(upstreamCalls - before).toBe(1);
    expect((await approver("GET", `/v1/approvals/${id}`)).json.status).toBe("used");

    // Used: the identical call is held for a new approval and does not run.
    const next = await transact(body);
    expect(next.status).toBe(403);
    expect(next.json.approval_id).toMatch(/^apr_/);
    expect(next.json.approval_id).not.toBe(id);
    expect(upstreamCalls - before).toBe(1);
  });

  it("another caller's identical call is not covered by the approval", async () => {
    const { call, approver, tenant } = await setup();
    const id = (await call(transfer({ amount: 500 }))).json.approval_id as string;
    expect((await approver("POST", `/v1/approvals/${id}/approve`)).status).toBe(200);
    const mallory = await token(tenant, "mallory");
    const res = await call(transfer({ amount: 500 }), proxyA, mallory);
    expect(res.status).toBe(403);
    expect(res.json.approval_id).not.toBe(id);
  });

  it("a denied approval stays denied: the call keeps being refused with a new pending approval", async () => {
    const { call, approver } = await setup();
    const id = (await call(transfer({ amount: 500 }))).json.approval_id as string;
    const denied = await approver("POST", `/v1/approvals/${id}/deny`, { reason: "no" });
    expect(denied.json).toMatchObject({ status: "denied", reason: "no" });
    const res = await call(transfer({ amount: 500 }));
    expect(res.status).toBe(403);
    expect(res.json.approval_id).not.toBe(id);
  });

  it("binds a non-MCP call to its body", async () => {
    const { call, approver } = await setup("http");
    const id = (await call('{"a":1}')).json.approval_id as string;
    expect(id).toMatch(/^apr_/);
    expect((await approver("GET", `/v1/approvals/${id}`)).json).toMatchObject({
      mcp_method: null,
      mcp_tool: null,
      arguments: null,
    });
    await approver("POST", `/v1/approvals/${id}/approve`);
    expect((await call('{"a":2}')).status).toBe(403);
    expect((await call('{"a":1}')).status).toBe(200);
  });

  it("a non-MCP body that arrives slower than the store deadline is still bound (403 approval required, not 503)", async () => {
    const { agentId, tenant } = await setup("http");
    const bearer = await token(tenant, "alice");
    async function* slowly() {
      yield Buffer.from('{"a":');
      // Longer than the store's read deadline (1.5 s) that bounds the approval's own statements.
      await new Promise((r) => setTimeout(r, 2_000));
      yield Buffer.from("1}");
    }
    const res = await request(`${proxyA.url}/v1/proxy/${agentId}/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
      body: Readable.from(slowly()),
    });
    expect(res.statusCode).toBe(403);
    const held = (await res.body.json()) as { error: string; approval_id: string };
    expect(held.error).toBe("approval required");
    // The same bytes sent at once are the same call.
    const again = await request(`${proxyA.url}/v1/proxy/${agentId}/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
      body: '{"a":1}',
    });
    expect(((await again.body.json()) as { approval_id: string }).approval_id).toBe(held.approval_id);
  });

  it("tools/call arguments that are not an object or too deep: the condition cannot be evaluated → on_error", async () => {
    const { call } = await setup();
    let deep: unknown = 1;
    for (let i = 0; i < 64; i++) deep = [deep];
    for (const args of ["text", [1, 2], { amount: deep }]) {
      const res = await call(transfer(args));
      expect(res).toEqual({ status: 403, json: { error: "denied by policy" } });
    }
  });
});

describe("approvals: who may decide, and when", () => {
  it("capabilities report the approvals family mounted", async () => {
    const { caller } = await setup();
    expect((await caller("GET", "/v1/capabilities")).json.surfaces).toMatchObject({ approvals: true });
  });

  it("without scope approvals:decide → 403; decided twice → 409; another tenant's → 404", async () => {
    const { call, caller, approver } = await setup();
    const id = (await call(transfer({ amount: 500 }))).json.approval_id as string;
    const noScope = await caller("POST", `/v1/approvals/${id}/approve`);
    expect(noScope).toMatchObject({ status: 403, json: { error: "scope approvals:decide required" } });
    expect((await approver("POST", `/v1/approvals/${id}/deny`)).status).toBe(200);
    const twice = await approver("POST", `/v1/approvals/${id}/approve`);
    expect(twice).toMatchObject({ status: 409, json: { error: "approval is not pending" } });

    const stranger = client(controlPlane.url, await token(newTenant(), "eve", ["approvals:decide"]));
    expect((await stranger("GET", `/v1/approvals/${id}`)).status).toBe(404);
    expect((await stranger("POST", `/v1/approvals/${id}/approve`)).status).toBe(404);
    expect((await stranger("GET", "/v1/approvals")).json.total).toBe(0);
    expect((await approver("GET", "/v1/approvals/apr_nope")).status).toBe(404);
  });

  it("bad input: unknown fields, wrong types, bad filters → 400 with an error", async () => {
    const { call, approver } = await setup();
    const id = (await call(transfer({ amount: 500 }))).json.approval_id as string;
    for (const body of [{ reason: 1 }, { extra: true }, [1]]) {
      const res = await approver("POST", `/v1/approvals/${id}/approve`, body);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: expect.any(String) });
    }
    expect((await approver("GET", "/v1/approvals?status=maybe")).status).toBe(400);
    expect((await approver("GET", "/v1/approvals?limit=x")).status).toBe(400);
  });
});

describe("approvals expire", () => {
  it("a pending approval past its 24 h reads expired, cannot be decided, and the call gets a new one", async () => {
    const { call, approver, tenant } = await setup();
    const id = (await call(transfer({ amount: 500 }))).json.approval_id as string;
    const pending = await approver("GET", `/v1/approvals/${id}`);
    const requested = Date.parse(pending.json.requested_at);
    expect(Date.parse(pending.json.expires_at) - requested).toBe(24 * 3600 * 1000);
    // A day passes (the store's clock cannot be moved: the row's expiry is).
    await controlPlane.rt.store.query(
      "update approvals set expires_at = now() - interval '1 second' where tenant_id = $1 and id = $2",
      [tenant, id],
    );
    expect((await approver("GET", `/v1/approvals/${id}`)).json.status).toBe("expired");
    expect((await approver("GET", "/v1/approvals?status=expired")).json.total).toBe(1);
    expect((await approver("POST", `/v1/approvals/${id}/approve`)).status).toBe(409);
    const again = await call(transfer({ amount: 500 }));
    expect(again.status).toBe(403);
    expect(again.json.approval_id).not.toBe(id);
  });

  it("an approval not used within GW_APPROVAL_TTL_SECONDS no longer lets the call pass", async () => {
    const { call, approver, tenant } = await setup();
    const id = (await call(transfer({ amount: 500 }))).json.approval_id as string;
    const approved = await approver("POST", `/v1/approvals/${id}/approve`);
    expect(Date.parse(approved.json.expires_at) - Date.parse(approved.json.decided_at)).toBe(900 * 1000);
    await controlPlane.rt.store.query(
      "update approvals set expires_at = now() - interval '1 second' where tenant_id = $1 and id = $2",
      [tenant, id],
    );
    expect((await call(transfer({ amount: 500 }))).status).toBe(403);
    expect((await approver("GET", `/v1/approvals/${id}`)).json.status).toBe("expired");
  });
});

describe("approvals across proxy replicas", () => {
  it("concurrent retries after one approval: exactly one passes", async () => {
    const { call, approver } = await setup();
    const id = (await call(transfer({ amount: 900 }))).json.approval_id as string;
    expect((await approver("POST", `/v1/approvals/${id}/approve`)).status).toBe(200);
    const before = upstreamCalls;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(transfer({ amount: 900 }), i % 2 ? proxyA : proxyB)),
    );
    // Compared as one list, so a failure shows every answer (status and body) that was not expected.
    const answers = results.map((r) =>
      r.status === 403 ? 403 : r.status === 200 ? 200 : [r.status, r.json],
    );
    expect(answers.sort()).toEqual([200, ...Array.from({ length: 11 }, () => 403)]);
    await eventually(() => expect(upstreamCalls - before).toBe(1));
  });
});
