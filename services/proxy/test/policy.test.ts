// @stores both: decisions and receipts are written through the store.
import { createHash, generateKeyPairSync } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createReceiptEmitter, loadReceiptKey } from "@gw/receipts";
import { eventually, serveApp, type TestApp, testEnv } from "@gw/testkit";
import { compactVerify, createRemoteJWKSet } from "jose";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Caller,
  caller,
  createAgent,
  deployment,
  pollDone,
  recordDone,
  startGateway,
  upstreamPool,
} from "./helpers.ts";

const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
const RECEIPTS = { GW_RECEIPT_SIGNING_KEY: JSON.stringify(jwk), GW_RECEIPT_ACTOR: "urn:gw:test-gateway" };
const sha = (b: string | Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

let gw: TestApp;
const { up, closeAll } = upstreamPool();

// A classifier webhook: denies tools named "danger*", warns otherwise; records what it received.
const classified: unknown[] = [];
let classifier: Server;
let classifierUrl: string;

beforeAll(async () => {
  gw = await startGateway(RECEIPTS);
  classifier = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const parsed = JSON.parse(body) as { mcp_tool: string | null };
      classified.push(parsed);
      const action = parsed.mcp_tool?.startsWith("danger") ? "deny" : "warn";
      // "slow*" tools are judged after 800 ms: a step that outlasts an impatient caller.
      setTimeout(
        () =>
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ action, reason: "reviewed" })),
        parsed.mcp_tool?.startsWith("slow") ? 800 : 0,
      );
    });
  });
  await new Promise<void>((r) => classifier.listen(0, "127.0.0.1", r));
  classifierUrl = `http://127.0.0.1:${(classifier.address() as AddressInfo).port}/decide`;
});
afterAll(async () => {
  await gw?.close();
  await closeAll();
  classifier?.closeAllConnections();
  await new Promise((r) => classifier?.close(r));
  // The signing key never reached a log line.
  expect(gw.logs.text()).not.toContain(jwk.d as string);
});

const echo = () =>
  up((_req, res, body) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ echoed: body.toString() }));
  });

function stream(call: Caller, agentId: string, body: string) {
  return request(`${gw.url}/v1/proxy/${agentId}/stream`, {
    method: "POST",
    headers: { authorization: `Bearer ${call.token}`, "content-type": "text/plain" },
    body,
  });
}

const toolCall = (name: string) =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: {} } });

async function decisions(call: Caller, query = "") {
  return (await call("GET", `/v1/policy/decisions${query}`)).json;
}

describe("policy on the proxy path", () => {
  it("without a document: nothing evaluated, policy_action null, no decision", async () => {
    const call = await caller(gw);
    const u = await echo();
    const agent = await createAgent(call, { upstream_url: u.url });
    const res = await call("POST", `/v1/proxy/${agent}`, "x");
    expect(res.status).toBe(202);
    expect(res.headers.get("x-gateway-policy-warning")).toBeNull();
    const done = await pollDone(call, agent, res.json.invocation_id);
    expect(done.json).toMatchObject({ policy_action: null, policy_matched_rule: null });
    expect((await decisions(call)).total).toBe(0);
  });

  it("deny (transactional and streaming): 403, no invocation, the upstream never hit, the decision recorded", async () => {
    const call = await caller(gw);
    const u = await echo();
    const agent = await createAgent(call, { upstream_url: u.url });
    expect(
      (await call("PUT", "/v1/policy", { rules: [{ action: "deny", match: { agents: [agent] } }] })).status,
    ).toBe(200);
    const res = await call("POST", `/v1/proxy/${agent}`, "secret body");
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: "denied by policy" });
    expect(res.headers.get("x-gateway-invocation-id")).toBeNull();
    const s = await stream(call, agent, "streamed body");
    expect(s.statusCode).toBe(403);
    expect(await s.body.json()).toEqual({ error: "denied by policy" });
    expect(u.received).toHaveLength(0);
    expect((await call("GET", `/v1/invocations?agent_id=${agent}`)).json.total).toBe(0);
    const d = await decisions(call, "?action=deny");
    expect(d.total).toBe(2);
    expect(d.data[0]).toMatchObject({ agent_id: agent, protocol: "http", action: "deny", matched_rule: "1" });
    // The decision's receipt is the only proof of the refusal.
    const receipted = await eventually(async () => {
      const rows = (await decisions(call, "?action=deny")).data as Array<{
        receipt_artifact_id: string | null;
      }>;
      return rows.every((r) => r.receipt_artifact_id) ? rows : undefined;
    });
    expect(receipted[0]?.receipt_artifact_id).toMatch(/^rcpt_/);
    // Request bodies are never recorded.
    expect(JSON.stringify(d)).not.toContain("secret body");
  });

  it("require_approval: the held and the approved decisions' receipts carry the approval id", async () => {
    const call = await caller(gw);
    const approver = await caller(gw, ["approvals:decide"], call.tenant);
    const u = await echo();
    const agent = await createAgent(call, { upstream_url: u.url });
    await call("PUT", "/v1/policy", { rules: [{ action: "require_approval", match: { agents: [agent] } }] });
    const held = await stream(call, agent, "pay 5");
    expect(held.statusCode).toBe(403);
    const id = ((await held.body.json()) as { approval_id: string }).approval_id;
    expect((await approver("POST", `/v1/approvals/${id}/approve`)).status).toBe(200);
    const passed = await stream(call, agent, "pay 5");
    expect(passed.statusCode).toBe(200);
    await passed.body.text();
    const receipted = await eventually(async () => {
      const rows = (await decisions(call)).data as Array<{
        action: string;
        receipt_artifact_id: string | null;
      }>;
      return rows.length === 2 && rows.every((r) => r.receipt_artifact_id) ? rows : undefined;
    });
    const keys = createRemoteJWKSet(new URL(`${gw.url}/v1/receipts/jwks`));
    for (const row of receipted) {
      const [stored] = await gw.rt.store.query("select jws from receipts where tenant_id = $1 and id = $2", [
        call.tenant,
        row.receipt_artifact_id,
      ]);
      const { payload } = await compactVerify(String(stored?.jws), keys, { algorithms: ["EdDSA"] });
      const body = JSON.parse(new TextDecoder().decode(payload));
      expect(body).toMatchObject({ action: "gateway.policy_decision", status: row.action, approval_id: id });
    }
  });

  it("warn: the call proceeds with X-Gateway-Policy-Warning on the 202 and on the stream", async () => {
    const call = await caller(gw);
    const u = await echo();
    const agent = await createAgent(call, { upstream_url: u.url });
    await call("PUT", "/v1/policy", { default: "warn" });
    const res = await call("POST", `/v1/proxy/${agent}`, "x");
    expect(res.status).toBe(202);
    expect(res.headers.get("x-gateway-policy-warning")).toBe("default");
    const done = await pollDone(call, agent, res.json.invocation_id);
    expect(done.json).toMatchObject({ status: "succeeded", policy_action: "warn", policy_matched_rule: "" });
    const s = await stream(call, agent, "y");
    expect(s.statusCode).toBe(200);
    expect(s.headers["x-gateway-policy-warning"]).toBe("default");
    const invId = s.headers["x-gateway-invocation-id"] as string;
    expect(await s.body.json()).toEqual({ echoed: "y" });
    const rec = await recordDone(call, invId);
    expect(rec.json).toMatchObject({ policy_action: "warn", policy_matched_rule: "" });
    const listed = await call("GET", "/v1/invocations?policy=warn");
    expect(listed.json.total).toBe(2);
    expect((await call("GET", "/v1/invocations?policy=allow")).json.total).toBe(0);
  });

  it("a policy write is effective on the very next call", async () => {
    const call = await caller(gw);
    const u = await echo();
    const agent = await createAgent(call, { upstream_url: u.url });
    await call("PUT", "/v1/policy", { rules: [{ action: "allow" }] });
    const first = await call("POST", `/v1/proxy/${agent}`, "x");
    expect(first.status).toBe(202);
    expect((await pollDone(call, agent, first.json.invocation_id)).json).toMatchObject({
      policy_action: "allow",
      policy_matched_rule: "1",
    });
    await call("PUT", "/v1/policy", {
      rules: [{ action: "allow", match: { agents: ["agt_other"] } }],
      default: "deny",
    });
    expect((await call("POST", `/v1/proxy/${agent}`, "x")).status).toBe(403);
    await call("PUT", "/v1/policy", { rules: [] });
    expect((await call("POST", `/v1/proxy/${agent}`, "x")).status).toBe(202);
  });

  it("DELETE /v1/policy: back to no document (no decision, policy_action null); the next PUT's version is higher", async () => {
    const call = await caller(gw);
    const u = await echo();
    const agent = await createAgent(call, { upstream_url: u.url });
    expect((await call("PUT", "/v1/policy", { default: "warn" })).json.version).toBe(1);
    expect((await call("PUT", "/v1/policy", { default: "allow" })).json.version).toBe(2);
    const before = await call("POST", `/v1/proxy/${agent}`, "x");
    expect((await pollDone(call, agent, before.json.invocation_id)).json.policy_action).toBe("allow");
    expect((await decisions(call)).total).toBe(1);

    const deleted = await call("DELETE", "/v1/policy");
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    // No document, but the counter is kept: no default, no rules, the last version.
    const read = await call("GET", "/v1/policy");
    expect(read.json).toMatchObject({ version: 2, rules: [] });
    expect(read.json.default).toBeUndefined();
    // Deleting again is the same answer.
    expect((await call("DELETE", "/v1/policy")).status).toBe(204);

    const after = await call("POST", `/v1/proxy/${agent}`, "x");
    expect(after.status).toBe(202);
    expect(after.headers.get("x-gateway-policy-warning")).toBeNull();
    const done = await pollDone(call, agent, after.json.invocation_id);
    expect(done.json).toMatchObject({ status: "succeeded", policy_action: null, policy_matched_rule: null });
    expect((await stream(call, agent, "y")).statusCode).toBe(200);
    expect((await decisions(call)).total).toBe(1);

    const again = await call("PUT", "/v1/policy", { default: "deny" });
    expect(again.json.version).toBe(3);
    expect((await call("POST", `/v1/proxy/${agent}`, "x")).status).toBe(403);
    expect((await decisions(call)).total).toBe(2);
  });

  it("MCP tools by glob, and a classifier webhook that sees only the six metadata fields", async () => {
    const call = await caller(gw);
    const u = await echo();
    const agent = await createAgent(call, { upstream_url: u.url, protocol: "mcp" });
    await call("PUT", "/v1/policy", {
      rules: [
        { action: "deny", match: { tools: ["delete_*"] } },
        { classifier: { url: classifierUrl, timeout_ms: 2000 }, match: { protocols: ["mcp"] } },
      ],
    });
    const headers = { "content-type": "application/json", "x-gateway-model": "m-1" };
    const denied = await call("POST", `/v1/proxy/${agent}`, toolCall("delete_all"), headers);
    expect(denied.status).toBe(403);
    const before = classified.length;
    const byClassifier = await call("POST", `/v1/proxy/${agent}`, toolCall("danger_zone"), headers);
    expect(byClassifier.status).toBe(403);
    const warned = await call("POST", `/v1/proxy/${agent}`, toolCall("search"), headers);
    expect(warned.status).toBe(202);
    expect(warned.headers.get("x-gateway-policy-warning")).toBe("classifier: reviewed");
    expect(classified.slice(before)).toEqual([
      {
        tenant_id: call.tenant,
        agent_id: agent,
        protocol: "mcp",
        mcp_method: "tools/call",
        mcp_tool: "danger_zone",
        model: "m-1",
      },
      {
        tenant_id: call.tenant,
        agent_id: agent,
        protocol: "mcp",
        mcp_method: "tools/call",
        mcp_tool: "search",
        model: "m-1",
      },
    ]);
    const done = await pollDone(call, agent, warned.json.invocation_id);
    expect(done.json).toMatchObject({ policy_action: "warn", policy_matched_rule: "2", mcp_tool: "search" });
    // Only the warned call reached the upstream.
    expect(u.received).toHaveLength(1);
    const d = await decisions(call);
    expect(
      d.data.map((x: { mcp_tool: string; action: string; matched_rule: string }) => [
        x.mcp_tool,
        x.action,
        x.matched_rule,
      ]),
    ).toEqual([
      ["search", "warn", "2"],
      ["danger_zone", "deny", "2"],
      ["delete_all", "deny", "1"],
    ]);
  });
  it("a transactional caller that went away before its 202 never has its call run", async () => {
    const call = await caller(gw);
    const u = await echo();
    const agent = await createAgent(call, { upstream_url: u.url, protocol: "mcp" });
    await call("PUT", "/v1/policy", {
      rules: [{ classifier: { url: classifierUrl, timeout_ms: 2000 }, match: { agents: [agent] } }],
    });
    // The caller gives up while step 6 waits for the slow classifier; the proxy goes on to step 8.
    const gaveUp = await fetch(`${gw.url}/v1/proxy/${agent}`, {
      method: "POST",
      headers: { authorization: `Bearer ${call.token}`, "content-type": "application/json" },
      body: toolCall("slow_tool"),
      signal: AbortSignal.timeout(200),
    }).catch((e: unknown) => (e as Error).name);
    expect(gaveUp).toBe("TimeoutError");
    // Its invocation was written after the caller left, and ended without running: cancelled, as a
    // stream whose client left.
    const ended = await eventually(async () => {
      const rows = (await call("GET", `/v1/invocations?agent_id=${agent}`)).json.data as Array<{
        status: string;
        error_class: string | null;
      }>;
      return rows.length === 1 && rows[0]?.status === "failed" ? rows : undefined;
    });
    expect(ended.map((r) => [r.status, r.error_class])).toEqual([["failed", "cancelled"]]);
    // A call that did answer still runs (the same agent, a tool judged at once).
    const ok = await call("POST", `/v1/proxy/${agent}`, toolCall("search"), {
      "content-type": "application/json",
    });
    expect(ok.status).toBe(202);
    await pollDone(call, agent, ok.json.invocation_id);
    expect(u.received).toHaveLength(1);
    await call("PUT", "/v1/policy", { rules: [] });
  });
});

describe("receipts on the proxy path", () => {
  const receiptOf = (call: Caller, id: string) =>
    eventually(async () => {
      const r = await call("GET", `/v1/invocations/${id}/receipt`);
      return r.json.attested ? r.json : undefined;
    });

  it("a completed transactional call's receipt verifies and attests the bytes forwarded each way", async () => {
    const call = await caller(gw);
    const u = await echo();
    const agent = await createAgent(call, { upstream_url: u.url });
    const res = await call("POST", `/v1/proxy/${agent}`, '{"q":1}', { "content-type": "application/json" });
    const done = await pollDone(call, agent, res.json.invocation_id);
    const receipt = await receiptOf(call, res.json.invocation_id);
    const keys = createRemoteJWKSet(new URL(`${gw.url}/v1/receipts/jwks`));
    const { payload } = await compactVerify(receipt.jws, keys, { algorithms: ["EdDSA"] });
    const body = JSON.parse(new TextDecoder().decode(payload));
    expect(body).toMatchObject({
      action: "gateway.invocation",
      subject: res.json.invocation_id,
      tenant_id: call.tenant,
      agent_id: agent,
      status: "succeeded",
      actor: "urn:gw:test-gateway",
      digests: {
        request: sha('{"q":1}'),
        response: sha(Buffer.from(done.json.response.body_b64, "base64")),
      },
    });
    expect((await call("GET", `/v1/invocations/${res.json.invocation_id}`)).json.receipt_artifact_id).toBe(
      receipt.artifact_id,
    );
  });

  it("a streamed call's receipt carries digests hashed while streaming", async () => {
    const call = await caller(gw);
    const u = await up((_req, res, body) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("part-1;");
      res.end(`got ${body.length}`);
    });
    const agent = await createAgent(call, { upstream_url: u.url });
    const sent = "s".repeat(100_000);
    const s = await stream(call, agent, sent);
    const got = await s.body.text();
    const id = s.headers["x-gateway-invocation-id"] as string;
    const receipt = await receiptOf(call, id);
    const { payload } = await compactVerify(
      receipt.jws,
      createRemoteJWKSet(new URL(`${gw.url}/v1/receipts/jwks`)),
    );
    expect(JSON.parse(new TextDecoder().decode(payload)).digests).toEqual({
      request: sha(sent),
      response: sha(got),
    });
  });
});

describe("a broken receipt emitter changes no call's outcome", () => {
  const broken = (mode: "throw" | "hang") => (rt: Parameters<typeof deployment>[0]) =>
    loadReceiptKey(JSON.stringify(jwk)).then((key) => {
      rt.receipts = createReceiptEmitter({
        key,
        actor: "urn:gw:broken",
        logger: rt.logger,
        taskTimeoutMs: 200,
        sink: {
          save: () => {
            if (mode === "throw") throw new Error("receipt store is down");
            return new Promise(() => {});
          },
        },
      });
      return deployment(rt);
    });

  it.each(["throw", "hang"] as const)("an emitter that %ss", async (mode) => {
    const app = await serveApp(broken(mode), testEnv(RECEIPTS), "gateway");
    try {
      const call = await caller(app);
      const u = await echo();
      const agent = await createAgent(call, { upstream_url: u.url });
      await call("PUT", "/v1/policy", { default: "warn" });
      for (let i = 0; i < 5; i++) {
        const res = await call("POST", `/v1/proxy/${agent}`, `t${i}`);
        expect(res.status).toBe(202);
        expect((await pollDone(call, agent, res.json.invocation_id)).json).toMatchObject({
          status: "succeeded",
          policy_action: "warn",
          receipt_artifact_id: null,
        });
        const s = await request(`${app.url}/v1/proxy/${agent}/stream`, {
          method: "POST",
          headers: { authorization: `Bearer ${call.token}` },
          body: `s${i}`,
        });
        expect(s.statusCode).toBe(200);
        expect(await s.body.json()).toEqual({ echoed: `s${i}` });
        const rec = await recordDone(call, s.headers["x-gateway-invocation-id"] as string);
        expect(rec.json.status).toBe("succeeded");
      }
      // A hanging save is given up after the emitter's 200 ms task time-out, then counted.
      await eventually(() => (app.logs.text().includes("receipt not emitted") ? true : undefined));
      const r = await call(
        "GET",
        `/v1/invocations/${(await call("GET", "/v1/invocations")).json.data[0].id}/receipt`,
      );
      expect(r.json).toMatchObject({ attested: false, reason: "not_recorded" });
    } finally {
      await app.close();
    }
  });
});
