// @stores both: the transactional path is the queue and its rows.
import { client, TEST_CA_FILE, type TestApp, token, type Upstream } from "@gw/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Caller,
  caller,
  createAgent,
  pollDone,
  recordDone,
  startGateway,
  upstreamPool,
} from "./helpers.ts";

let gw: TestApp;
let call: Caller;
const { up, closeAll } = upstreamPool();

beforeAll(async () => {
  gw = await startGateway({
    GW_UPSTREAM_CA_FILE: TEST_CA_FILE,
    GW_TRANSACT_TIMEOUT_MS: "700",
    GW_CONNECT_TIMEOUT_MS: "1000",
  });
  call = await caller(gw, ["invocations:read_body"]);
});
afterAll(async () => {
  await gw?.close();
  await closeAll();
});

describe("transactional proxy", () => {
  it("answers 202 at once, then the poll carries the upstream's status and body", async () => {
    const u = await up(
      (_req, res, body) => {
        res.writeHead(200, { "content-type": "application/json", "x-extra": "1" });
        res.end(JSON.stringify({ echoed: body.toString() }));
      },
      { tls: true },
    );
    const agent = await createAgent(call, { upstream_url: `${u.url}/invoke`, capture_bodies: true });
    const res = await call("POST", `/v1/proxy/${agent}`, '{"q":"hi"}', {
      "content-type": "application/json",
      "x-gateway-model": "model-x",
      "x-caller": "yes",
    });
    expect(res.status).toBe(202);
    const invId = res.json.invocation_id;
    expect(invId).toMatch(/^inv_/);
    expect(res.headers.get("x-gateway-invocation-id")).toBe(invId);
    expect(Object.keys(res.json)).toEqual(["invocation_id"]);

    const done = await pollDone(call, agent, invId);
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({
      id: invId,
      agent_id: agent,
      mode: "transactional",
      status: "succeeded",
      error_class: null,
      model: "model-x",
      upstream_status: 200,
      req_size: 10,
      policy_action: null,
      policy_matched_rule: null,
      receipt_artifact_id: null,
    });
    expect(done.json.response.status).toBe(200);
    expect(done.json.response.headers).toEqual({ "content-type": "application/json" });
    expect(JSON.parse(Buffer.from(done.json.response.body_b64, "base64").toString())).toEqual({
      echoed: '{"q":"hi"}',
    });
    expect(done.json.completed_at).not.toBeNull();

    const seen = u.received[0];
    expect(seen?.headers["x-caller"]).toBe("yes");
    expect(seen?.headers.authorization).toBeUndefined();
    expect(seen?.headers["x-gateway-model"]).toBeUndefined();
    expect(seen?.headers["x-gateway-invocation-id"]).toBe(invId);

    const detail = await call("GET", `/v1/invocations/${invId}`);
    expect(detail.json.body_captured).toBe(true);
    expect(Buffer.from(detail.json.req_body, "base64").toString()).toBe('{"q":"hi"}');
  });

  it("records each failure class", async () => {
    const five = await up((_req, res) => {
      res.writeHead(500);
      res.end("boom");
    });
    const four = await up((_req, res) => {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("missing");
    });
    const hang = await up(() => {});
    const reset = await up((req) => req.socket.destroy());
    const cases: Array<[Upstream, string, number | null]> = [
      [five, "upstream_5xx", 500],
      [four, "upstream_4xx", 404],
      [hang, "timeout", null],
      [reset, "upstream_5xx", null],
    ];
    for (const [u, cls, status] of cases) {
      const agent = await createAgent(call, { upstream_url: u.url });
      const res = await call("POST", `/v1/proxy/${agent}`, "x");
      expect(res.status).toBe(202);
      const done = await pollDone(call, agent, res.json.invocation_id);
      expect(done.json, cls).toMatchObject({ status: "failed", error_class: cls, upstream_status: status });
      if (status !== null) expect(done.json.response.status).toBe(status);
      else expect(done.json).not.toHaveProperty("response");
    }
    // A 500 is not retried; 502/503/504 are (below).
    expect(five.received).toHaveLength(1);
    expect(four.received).toHaveLength(1);
  });

  it("retries 502/503/504 with back-off, then succeeds", async () => {
    let n = 0;
    const flaky = await up((_req, res) => {
      n++;
      res.writeHead(n === 1 ? 503 : n === 2 ? 502 : 200);
      res.end(`attempt ${n}`);
    });
    const agent = await createAgent(call, { upstream_url: flaky.url });
    const res = await call("POST", `/v1/proxy/${agent}`, "x");
    const done = await pollDone(call, agent, res.json.invocation_id);
    expect(done.json.status).toBe("succeeded");
    expect(Buffer.from(done.json.response.body_b64, "base64").toString()).toBe("attempt 3");
    expect(flaky.received).toHaveLength(3);
  });

  it("gives up after the configured retries and records the last answer", async () => {
    const down = await up((_req, res) => {
      res.writeHead(503);
      res.end("down");
    });
    const agent = await createAgent(call, { upstream_url: down.url });
    const res = await call("POST", `/v1/proxy/${agent}`, "x");
    const done = await pollDone(call, agent, res.json.invocation_id);
    expect(done.json).toMatchObject({ status: "failed", error_class: "upstream_5xx", upstream_status: 503 });
    expect(down.received).toHaveLength(3);
  });

  it("does not follow a redirect to a blocked address", async () => {
    const target = await up((_req, res) => res.end("secret metadata"));
    const redirect = await up((_req, res) => {
      res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" });
      res.end();
    });
    const redirectLocal = await up((_req, res) => {
      res.writeHead(302, { location: target.url });
      res.end();
    });
    for (const u of [redirect, redirectLocal]) {
      const agent = await createAgent(call, { upstream_url: u.url });
      const res = await call("POST", `/v1/proxy/${agent}`, "x");
      const done = await pollDone(call, agent, res.json.invocation_id);
      expect(done.json.upstream_status).toBeGreaterThanOrEqual(300);
      expect(done.json.upstream_status).toBeLessThan(400);
    }
    expect(target.received).toHaveLength(0);
  });

  it("refuses a body over 32 MiB with 413 and creates no invocation", async () => {
    const u = await up((_req, res) => res.end("ok"));
    const agent = await createAgent(call, { upstream_url: u.url });
    const big = Buffer.alloc(32 * 1024 * 1024 + 1, 0x61);
    const res = await request(`${gw.url}/v1/proxy/${agent}`, {
      method: "POST",
      headers: { authorization: `Bearer ${call.token}` },
      body: big,
    });
    expect(res.statusCode).toBe(413);
    expect(await res.body.json()).toEqual({ error: "request body is larger than 32 MiB" });
    // Without Content-Length (chunked), the count while reading decides.
    async function* chunked() {
      for (let i = 0; i < 33; i++) yield Buffer.alloc(1024 * 1024, 0x62);
    }
    const res2 = await request(`${gw.url}/v1/proxy/${agent}`, {
      method: "POST",
      headers: { authorization: `Bearer ${call.token}` },
      body: chunked() as unknown as Buffer,
    });
    expect(res2.statusCode).toBe(413);
    expect(await res2.body.json()).toEqual({ error: "request body is larger than 32 MiB" });
    const list = await call("GET", `/v1/invocations?agent_id=${agent}`);
    expect(list.json.total).toBe(0);
    expect(u.received).toHaveLength(0);
    // Exactly 32 MiB is fine.
    const ok = await request(`${gw.url}/v1/proxy/${agent}`, {
      method: "POST",
      headers: { authorization: `Bearer ${call.token}` },
      body: big.subarray(0, 32 * 1024 * 1024),
    });
    expect(ok.statusCode).toBe(202);
    await ok.body.text();
  });
});

describe("admission errors (both modes)", () => {
  it("refuses unavailable agents with 422 and creates nothing", async () => {
    const u = await up((_req, res) => res.end("ok"));
    const inactive = await createAgent(call, { upstream_url: u.url, status: "inactive" });
    const suspended = await createAgent(call, { upstream_url: u.url, suspended: true });
    const noUrl = await createAgent(call, {});
    for (const [agent, error] of [
      [inactive, "agent is inactive"],
      [suspended, "agent is suspended"],
      [noUrl, "agent has no upstream_url"],
    ]) {
      for (const path of [`/v1/proxy/${agent}`, `/v1/proxy/${agent}/stream`]) {
        const res = await call("POST", path, "x");
        expect(res.status, path).toBe(422);
        expect(res.json).toEqual({ error });
        expect(res.headers.get("x-gateway-invocation-id")).toBeNull();
      }
    }
    expect(u.received).toHaveLength(0);
    expect(
      (await call("GET", "/v1/invocations?status=pending")).json.data.filter((i: { agent_id: string }) =>
        [inactive, suspended, noUrl].includes(i.agent_id),
      ),
    ).toEqual([]);
  });

  it("refuses a model header over 256 bytes with 400, accepts exactly 256", async () => {
    const u = await up((_req, res) => res.end("ok"));
    const agent = await createAgent(call, { upstream_url: u.url });
    for (const path of [`/v1/proxy/${agent}`, `/v1/proxy/${agent}/stream`]) {
      const bad = await call("POST", path, "x", { "x-gateway-model": "m".repeat(257) });
      expect(bad.status).toBe(400);
      expect(bad.json.error).toMatch(/X-Gateway-Model/);
    }
    const ok = await call("POST", `/v1/proxy/${agent}`, "x", { "x-gateway-model": "m".repeat(256) });
    expect(ok.status).toBe(202);
    const done = await pollDone(call, agent, ok.json.invocation_id);
    expect(done.json.model).toBe("m".repeat(256));
  });

  it("records an empty model header as null on both modes", async () => {
    const u = await up((_req, res) => res.end("ok"));
    const agent = await createAgent(call, { upstream_url: u.url });
    const tx = await call("POST", `/v1/proxy/${agent}`, "x", { "x-gateway-model": "" });
    expect(tx.status).toBe(202);
    expect((await pollDone(call, agent, tx.json.invocation_id)).json.model).toBeNull();
    const st = await call("POST", `/v1/proxy/${agent}/stream`, "x", { "x-gateway-model": "" });
    expect(st.status).toBe(200);
    const id = st.headers.get("x-gateway-invocation-id") ?? "";
    expect((await recordDone(call, id)).json.model).toBeNull();
  });

  it("answers other methods with 405 and an Allow header", async () => {
    const agent = await createAgent(call, { upstream_url: "https://example.com" });
    for (const [method, path, allow] of [
      ["GET", `/v1/proxy/${agent}`, "POST"],
      ["DELETE", `/v1/proxy/${agent}/stream`, "POST"],
      ["GET", `/v1/proxy/${agent}/stream`, "POST"],
      ["PUT", `/v1/proxy/${agent}`, "POST"],
      ["POST", `/v1/proxy/${agent}/invocations/inv_x`, "GET, HEAD"],
    ]) {
      // The agent is read from the store first (its protocol decides GET and DELETE): on a loaded
      // machine that read may miss its deadline, a 503 that says so; wait until the store answers.
      let res = await call(method as string, path as string);
      for (let i = 0; i < 20 && res.status === 503 && res.json?.error === "store unavailable"; i++)
        res = await call(method as string, path as string);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow")).toBe(allow);
      expect(typeof res.json.error).toBe("string");
    }
  });

  it("requires a token on every proxy route (401, empty body)", async () => {
    const agent = await createAgent(call, { upstream_url: "https://example.com" });
    for (const [method, path] of [
      ["POST", `/v1/proxy/${agent}`],
      ["POST", `/v1/proxy/${agent}/stream`],
      ["GET", `/v1/proxy/${agent}/invocations/inv_x`],
    ]) {
      const res = await fetch(`${gw.url}${path}`, {
        method: method as string,
        body: method === "POST" ? "x" : null,
      });
      expect(res.status).toBe(401);
      expect(await res.text()).toBe("");
    }
  });
});

describe("tenant isolation on the data plane", () => {
  it("another tenant can neither call nor poll an agent, nor read its invocations", async () => {
    const u = await up((_req, res) => res.end("ok"));
    const agent = await createAgent(call, { upstream_url: u.url });
    const res = await call("POST", `/v1/proxy/${agent}`, "x");
    const invId = res.json.invocation_id;
    await pollDone(call, agent, invId);

    const other = await caller(gw, ["invocations:read_body"]);
    expect((await other("POST", `/v1/proxy/${agent}`, "x")).status).toBe(404);
    expect((await other("POST", `/v1/proxy/${agent}/stream`, "x")).status).toBe(404);
    const poll = await other("GET", `/v1/proxy/${agent}/invocations/${invId}`);
    expect(poll.status).toBe(404);
    expect(poll.json).toEqual({ error: "invocation not found" });
    expect((await other("GET", `/v1/invocations/${invId}`)).status).toBe(404);
    expect((await other("GET", "/v1/invocations")).json).toMatchObject({ data: [], total: 0 });
    expect((await other("GET", `/v1/invocations?agent_id=${agent}`)).json.total).toBe(0);
    expect(u.received).toHaveLength(1);

    // The owner cannot poll an invocation through another of its own agents either.
    const second = await createAgent(call, { upstream_url: u.url });
    expect((await call("GET", `/v1/proxy/${second}/invocations/${invId}`)).status).toBe(404);
  });
});

describe("who reads the polled body", () => {
  it("the caller that made the call and holders of invocations:read_body; another user sees no body", async () => {
    const u = await up((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("alice's secret answer");
    });
    const tenant = `t-${crypto.randomUUID()}`;
    const alice = await caller(gw, [], tenant); // sub user-1, no scope
    const agent = await createAgent(alice, { upstream_url: u.url });
    const res = await alice("POST", `/v1/proxy/${agent}`, "x");
    expect(res.status).toBe(202);
    const invId = res.json.invocation_id as string;
    const own = await pollDone(alice, agent, invId);
    expect(Buffer.from(own.json.response.body_b64, "base64").toString()).toBe("alice's secret answer");

    const as = async (sub: string, scopes: string[]) => {
      const t = await token(tenant, sub, scopes);
      return client(gw.url, t)("GET", `/v1/proxy/${agent}/invocations/${invId}`);
    };
    const bob = await as("user-2", []);
    expect(bob.status).toBe(200);
    expect(bob.json.status).toBe("succeeded");
    expect(bob.json.response).toEqual({ status: 200, headers: { "content-type": "text/plain" } });
    expect(bob.text).not.toContain(Buffer.from("alice's secret answer").toString("base64"));

    const auditor = await as("user-3", ["invocations:read_body"]);
    expect(Buffer.from(auditor.json.response.body_b64, "base64").toString()).toBe("alice's secret answer");
  });
});
