// @stores both: agent writes and reads go through the store.
import { client, newTenant, serveApp, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

let app: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp);
});
afterAll(() => app?.close());

const PAY_TO = "0x1111111111111111111111111111111111111111";

async function asTenant(tenant = newTenant(), sub = "user-1") {
  return client(app.url, await token(tenant, sub));
}

describe("agents: happy path", () => {
  it("creates, reads, lists, patches and soft-deletes an agent", async () => {
    const call = await asTenant(undefined, "alice");
    const created = await call("POST", "/v1/agents", {
      name: "echo",
      description: "test agent",
      upstream_url: "https://api.example.com/v1/run",
    });
    expect(created.status).toBe(201);
    const agent = created.json;
    expect(agent.id).toMatch(/^agt_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(created.headers.get("location")).toBe(`/v1/agents/${agent.id}`);
    expect(agent).toMatchObject({
      name: "echo",
      description: "test agent",
      upstream_url: "https://api.example.com/v1/run",
      protocol: "http",
      mcp_transport: null,
      credential_ref: null,
      price: null,
      status: "active",
      suspended: false,
      rate_limit: null,
      max_concurrency: null,
      capture_bodies: false,
      emit_receipts: false,
      created_by: "alice",
    });
    expect(new Date(agent.created_at).toISOString()).toBe(agent.created_at);

    const got = await call("GET", `/v1/agents/${agent.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(agent);

    const patched = await call("PATCH", `/v1/agents/${agent.id}`, {
      description: null,
      suspended: true,
      rate_limit: { rps: 5, burst: 7 },
      max_concurrency: 3,
      capture_bodies: true,
      price: { amount: "1000", asset: "USDC", network: "base", pay_to: PAY_TO },
    });
    expect(patched.status).toBe(200);
    expect(patched.json.max_concurrency).toBe(3);
    expect(patched.json).toMatchObject({
      name: "echo",
      description: null,
      suspended: true,
      rate_limit: { rps: 5, burst: 7 },
      capture_bodies: true,
      price: { amount: "1000", asset: "USDC", network: "base", pay_to: PAY_TO },
      upstream_url: "https://api.example.com/v1/run",
    });

    const list = await call("GET", "/v1/agents");
    expect(list.status).toBe(200);
    expect(list.json).toMatchObject({ limit: 20, offset: 0, total: 1 });
    expect(list.json.data.map((a: { id: string }) => a.id)).toEqual([agent.id]);

    const del = await call("DELETE", `/v1/agents/${agent.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await call("GET", `/v1/agents/${agent.id}`)).status).toBe(404);
    expect((await call("DELETE", `/v1/agents/${agent.id}`)).status).toBe(404);
    expect((await call("GET", "/v1/agents")).json).toMatchObject({ data: [], total: 0 });
  });

  it("creates an MCP agent with the only transport there is", async () => {
    const call = await asTenant();
    const res = await call("POST", "/v1/agents", {
      name: "tools",
      upstream_url: "https://mcp.example.com/mcp",
      protocol: "mcp",
      mcp_protocol_version: "2025-06-18",
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      protocol: "mcp",
      mcp_transport: "streamable_http",
      mcp_protocol_version: "2025-06-18",
    });
  });

  it("accepts an agent with no upstream_url (it cannot be called until one is set)", async () => {
    const call = await asTenant();
    const res = await call("POST", "/v1/agents", { name: "later" });
    expect(res.status).toBe(201);
    expect(res.json.upstream_url).toBeNull();
  });

  it("filters by protocol and paginates newest first", async () => {
    const call = await asTenant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const body =
        i % 2 ? { name: `m${i}`, protocol: "mcp", upstream_url: "https://m.example.com" } : { name: `h${i}` };
      ids.push((await call("POST", "/v1/agents", body)).json.id);
    }
    const mcp = await call("GET", "/v1/agents?protocol=mcp");
    expect(mcp.json.total).toBe(2);
    expect(mcp.json.data.every((a: { protocol: string }) => a.protocol === "mcp")).toBe(true);
    const page = await call("GET", "/v1/agents?limit=2&offset=1");
    expect(page.json).toMatchObject({ limit: 2, offset: 1, total: 5 });
    expect(page.json.data.map((a: { id: string }) => a.id)).toEqual([ids[3], ids[2]]);
    expect(page.json.data[0]).not.toHaveProperty("total_");
    // A page past the end still says how many there are; a tenant with none says 0.
    expect((await call("GET", "/v1/agents?offset=10")).json).toMatchObject({ data: [], total: 5 });
    expect((await call("GET", "/v1/agents?protocol=a2a")).json).toMatchObject({ data: [], total: 0 });
    expect((await call("GET", "/v1/agents?limit=1000")).json.limit).toBe(100);
    expect((await call("GET", "/v1/agents?limit=0")).json.limit).toBe(1);
  });

  it("accepts a price at the top of the 256-bit range and per-tool prices", async () => {
    const call = await asTenant();
    const max = ((1n << 256n) - 1n).toString();
    const res = await call("POST", "/v1/agents", {
      name: "priced",
      price: { amount: max, asset: "USDC", network: "base-sepolia", pay_to: PAY_TO, tools: { search: "5" } },
    });
    expect(res.status).toBe(201);
    expect(res.json.price.amount).toBe(max);
  });
});

describe("agents: bad input gets a clear 400 and writes nothing", () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ["missing name", { upstream_url: "https://x.example.com" }, /name/],
    ["empty name", { name: "  " }, /name/],
    ["name of the wrong type", { name: 42 }, /name/],
    ["unknown field", { name: "a", colour: "red" }, /unknown field "colour"/],
    ["stdio transport", { name: "a", protocol: "mcp", mcp_transport: "stdio" }, /stdio/],
    ["legacy sse transport", { name: "a", protocol: "mcp", mcp_transport: "sse" }, /streamable_http/],
    ["transport on an http agent", { name: "a", mcp_transport: "streamable_http" }, /mcp_transport/],
    ["unknown protocol", { name: "a", protocol: "grpc" }, /protocol/],
    ["private upstream", { name: "a", upstream_url: "https://10.0.0.1/" }, /upstream_url/],
    ["metadata upstream", { name: "a", upstream_url: "https://169.254.169.254/" }, /upstream_url/],
    ["credentials in the URL", { name: "a", upstream_url: "https://u:p@example.com" }, /upstream_url/],
    ["file URL", { name: "a", upstream_url: "file:///etc/passwd" }, /upstream_url/],
    [
      "amount with a sign",
      { name: "a", price: { amount: "-1", asset: "USDC", network: "base", pay_to: PAY_TO } },
      /amount/,
    ],
    [
      "amount over 256 bits",
      {
        name: "a",
        price: { amount: (1n << 256n).toString(), asset: "USDC", network: "base", pay_to: PAY_TO },
      },
      /256 bits/,
    ],
    [
      "decimal amount",
      { name: "a", price: { amount: "1.5", asset: "USDC", network: "base", pay_to: PAY_TO } },
      /amount/,
    ],
    [
      "wrong asset",
      { name: "a", price: { amount: "1", asset: "ETH", network: "base", pay_to: PAY_TO } },
      /asset/,
    ],
    [
      "wrong network",
      { name: "a", price: { amount: "1", asset: "USDC", network: "mainnet", pay_to: PAY_TO } },
      /network/,
    ],
    [
      "bad pay_to",
      { name: "a", price: { amount: "1", asset: "USDC", network: "base", pay_to: "0x12" } },
      /pay_to/,
    ],
    ["rate limit of zero", { name: "a", rate_limit: { rps: 0, burst: 1 } }, /rps/],
    ["fractional burst", { name: "a", rate_limit: { rps: 1, burst: 1.5 } }, /burst/],
    ["max_concurrency of zero", { name: "a", max_concurrency: 0 }, /max_concurrency/],
    ["fractional max_concurrency", { name: "a", max_concurrency: 1.5 }, /max_concurrency/],
    ["string max_concurrency", { name: "a", max_concurrency: "8" }, /max_concurrency/],
    ["unknown credential", { name: "a", credential_ref: "cred_nope" }, /credential_ref/],
    ["bad status", { name: "a", status: "paused" }, /status/],
    ["array body", [{ name: "a" }], /./],
  ];

  it.each(cases)("%s", async (_label, body, message) => {
    const call = await asTenant();
    const res = await call("POST", "/v1/agents", body);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(message);
    expect(Object.keys(res.json)).toEqual(["error"]);
    expect((await call("GET", "/v1/agents")).json.total).toBe(0);
  });

  it("rejects a body that is JSON but not one object (arrays, scalars, null), on create and patch", async () => {
    const call = await asTenant();
    const created = await call("POST", "/v1/agents", { name: "kept", description: "before" });
    for (const body of ["[]", '[{"name":"a"}]', "1", '"name"', "null", "true"]) {
      const post = await call("POST", "/v1/agents", body, { "content-type": "application/json" });
      expect(post.status).toBe(400);
      expect(post.json).toEqual({ error: "request body must be a JSON object" });
      const patch = await call("PATCH", `/v1/agents/${created.json.id}`, body, {
        "content-type": "application/json",
      });
      expect(patch.status).toBe(400);
    }
    expect((await call("GET", `/v1/agents/${created.json.id}`)).json.description).toBe("before");
    expect((await call("GET", "/v1/agents")).json.total).toBe(1);
  });

  it("rejects malformed JSON, a non-JSON content type and an oversized body", async () => {
    const call = await asTenant();
    const bad = await call("POST", "/v1/agents", "{not json", { "content-type": "application/json" });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe("request body must be valid JSON");
    const text = await call("POST", "/v1/agents", "name=a", { "content-type": "text/plain" });
    expect(text.status).toBe(400);
    expect(text.json.error).toMatch(/content-type/);
    const huge = await call("POST", "/v1/agents", { name: "a", description: "x".repeat(300 * 1024) });
    expect(huge.status).toBe(413);
    expect(huge.json).toEqual({ error: "request body is larger than 256 KiB" });
    expect((await call("GET", "/v1/agents")).json.total).toBe(0);
  });

  it("rejects bad patches and leaves the agent as it was", async () => {
    const call = await asTenant();
    const agent = (await call("POST", "/v1/agents", { name: "a", upstream_url: "https://a.example.com" }))
      .json;
    for (const body of [
      { name: null },
      { upstream_url: "http://[::1]/" },
      { protocol: "mcp", mcp_transport: "stdio" },
      { id: "agt_other" },
      { created_by: "mallory" },
      { suspended: "yes" },
    ]) {
      const res = await call("PATCH", `/v1/agents/${agent.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(typeof res.json.error).toBe("string");
    }
    expect((await call("GET", `/v1/agents/${agent.id}`)).json).toEqual(agent);
  });

  it("answers 404 for ids that are malformed or do not exist, and bad list queries with 400", async () => {
    const call = await asTenant();
    for (const id of [
      "nope",
      "agt_123",
      "agt_00000000-0000-7000-8000-000000000000",
      "inv_00000000-0000-7000-8000-000000000000",
    ]) {
      expect((await call("GET", `/v1/agents/${id}`)).status).toBe(404);
      expect((await call("PATCH", `/v1/agents/${id}`, { name: "x" })).status).toBe(404);
      expect((await call("DELETE", `/v1/agents/${id}`)).status).toBe(404);
    }
    expect((await call("GET", "/v1/agents?protocol=grpc")).status).toBe(400);
    expect((await call("GET", "/v1/agents?limit=abc")).status).toBe(400);
    expect((await call("GET", "/v1/agents?offset=-1")).status).toBe(400);
  });

  it("turns protocol mcp into http by dropping MCP-only fields", async () => {
    const call = await asTenant();
    const a = (
      await call("POST", "/v1/agents", { name: "m", protocol: "mcp", mcp_protocol_version: "2025-06-18" })
    ).json;
    const res = await call("PATCH", `/v1/agents/${a.id}`, { protocol: "http" });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ protocol: "http", mcp_transport: null, mcp_protocol_version: null });
  });
});

describe("agents: tenant isolation", () => {
  it("never shows one tenant's agent to another", async () => {
    const a = await asTenant();
    const b = await asTenant();
    const agent = (await a("POST", "/v1/agents", { name: "secret-agent" })).json;
    expect((await b("GET", `/v1/agents/${agent.id}`)).status).toBe(404);
    const patch = await b("PATCH", `/v1/agents/${agent.id}`, { name: "hijacked" });
    expect(patch.status).toBe(404);
    expect(patch.json).toEqual({ error: "agent not found" });
    expect((await b("DELETE", `/v1/agents/${agent.id}`)).status).toBe(404);
    expect((await b("GET", "/v1/agents")).json).toMatchObject({ data: [], total: 0 });
    // And tenant A still has it, unchanged.
    expect((await a("GET", `/v1/agents/${agent.id}`)).json.name).toBe("secret-agent");
  });

  it("same user id in two tenants is two callers", async () => {
    const a = await asTenant(newTenant(), "same-user");
    const b = await asTenant(newTenant(), "same-user");
    const agent = (await a("POST", "/v1/agents", { name: "x" })).json;
    expect((await b("GET", `/v1/agents/${agent.id}`)).status).toBe(404);
  });
});
