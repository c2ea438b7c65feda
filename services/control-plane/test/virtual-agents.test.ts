// @stores both: virtual agents and their members are rows in the store.
import { client, newTenant, serveApp, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

let app: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp);
});
afterAll(() => app?.close());

async function asTenant(tenant = newTenant()) {
  return client(app.url, await token(tenant, "user-1"));
}
type Call = Awaited<ReturnType<typeof asTenant>>;

async function mcpAgent(call: Call, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await call("POST", "/v1/agents", {
    name: "member",
    protocol: "mcp",
    upstream_url: "https://mcp.example.com/mcp",
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.json.id as string;
}

describe("virtual MCP servers: the agent model", () => {
  it("creates a virtual agent with members in order, patches and clears them", async () => {
    const call = await asTenant();
    const a = await mcpAgent(call);
    const b = await mcpAgent(call);
    const members = [
      { agent_id: a, prefix: "gh", include: ["issue_*"], exclude: ["issue_delete"] },
      { agent_id: b, prefix: "" },
    ];
    const created = await call("POST", "/v1/agents", { name: "portal", protocol: "mcp", members });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ upstream_url: null, protocol: "mcp", members });
    const got = await call("GET", `/v1/agents/${created.json.id}`);
    expect(got.json.members).toEqual(members);
    const patched = await call("PATCH", `/v1/agents/${created.json.id}`, {
      members: [{ agent_id: b, prefix: "b" }],
    });
    expect(patched.status).toBe(200);
    expect(patched.json.members).toEqual([{ agent_id: b, prefix: "b" }]);
    // An ordinary agent shows members null.
    expect((await call("GET", `/v1/agents/${a}`)).json.members).toBeNull();
    const cleared = await call("PATCH", `/v1/agents/${created.json.id}`, {
      members: null,
      upstream_url: "https://mcp.example.com/other",
    });
    expect(cleared.status).toBe(200);
    expect(cleared.json).toMatchObject({ members: null, upstream_url: "https://mcp.example.com/other" });
  });

  it("refuses invalid members with a 400 naming the rule", async () => {
    const call = await asTenant();
    const other = await asTenant();
    const a = await mcpAgent(call);
    const b = await mcpAgent(call);
    const foreign = await mcpAgent(other);
    const httpAgent = (
      await call("POST", "/v1/agents", { name: "h", upstream_url: "https://api.example.com" })
    ).json.id as string;
    const virtual = (
      await call("POST", "/v1/agents", {
        name: "v",
        protocol: "mcp",
        members: [{ agent_id: a, prefix: "a" }],
      })
    ).json.id as string;
    const deleted = await mcpAgent(call);
    expect((await call("DELETE", `/v1/agents/${deleted}`)).status).toBe(204);
    const cases: Array<[unknown, RegExp]> = [
      [[], /members: must name at least one member/],
      [Array.from({ length: 17 }, (_, i) => ({ agent_id: a, prefix: `p${i}` })), /at most 16 members/],
      [
        [{ agent_id: "agt_00000000-0000-7000-8000-000000000000", prefix: "x" }],
        /members\.0\.agent_id: does not name an agent/,
      ],
      [[{ agent_id: foreign, prefix: "x" }], /members\.0\.agent_id: does not name an agent of this tenant/],
      [[{ agent_id: deleted, prefix: "x" }], /members\.0\.agent_id: does not name an agent/],
      [
        [{ agent_id: httpAgent, prefix: "x" }],
        /members\.0\.agent_id: names an agent that is not an MCP agent/,
      ],
      [[{ agent_id: virtual, prefix: "x" }], /members\.0\.agent_id: names a virtual server/],
      [
        [
          { agent_id: a, prefix: "x" },
          { agent_id: a, prefix: "y" },
        ],
        /members\.1\.agent_id: names an agent that is already a member/,
      ],
      [
        [
          { agent_id: a, prefix: "x" },
          { agent_id: b, prefix: "x" },
        ],
        /members\.1\.prefix: is already the prefix/,
      ],
      [
        [
          { agent_id: a, prefix: "" },
          { agent_id: b, prefix: "" },
        ],
        /members\.1\.prefix: is already the prefix/,
      ],
      [[{ agent_id: a, prefix: "Bad" }], /members\.0\.prefix: must match/],
      [[{ agent_id: a, prefix: "-x" }], /members\.0\.prefix: must match/],
      [[{ agent_id: a, prefix: "a".repeat(33) }], /members\.0\.prefix: must match/],
      [
        [{ agent_id: a, prefix: "x", include: ["a*b"] }],
        /members\.0\.include\.0: must be a tool name, optionally ending/,
      ],
      [[{ agent_id: a, prefix: "x", extra: 1 }], /unknown field "members\.0\.extra"/],
      [[{ prefix: "x" }], /members\.0\.agent_id is required/],
    ];
    for (const [members, message] of cases) {
      const res = await call("POST", "/v1/agents", { name: "v", protocol: "mcp", members });
      expect(res.status, JSON.stringify(members)).toBe(400);
      expect(res.json.error).toMatch(message);
      // The caller's own values are not echoed back.
      expect(res.json.error).not.toContain(foreign);
    }
    const rules: Array<[Record<string, unknown>, RegExp]> = [
      [{ protocol: "http" }, /members is only valid for protocol mcp/],
      [
        { protocol: "mcp", upstream_url: "https://mcp.example.com/mcp" },
        /upstream_url must be null for a virtual server/,
      ],
    ];
    for (const [extra, message] of rules) {
      const res = await call("POST", "/v1/agents", {
        name: "v",
        members: [{ agent_id: a, prefix: "a" }],
        ...extra,
      });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(message);
    }
    // A virtual server cannot name itself.
    const self = await call("PATCH", `/v1/agents/${virtual}`, {
      members: [{ agent_id: virtual, prefix: "s" }],
    });
    expect(self.status).toBe(400);
    expect(self.json.error).toMatch(/cannot be its own member/);
  });

  it("does not refuse deleting or deactivating a member", async () => {
    const call = await asTenant();
    const a = await mcpAgent(call);
    const v = await call("POST", "/v1/agents", {
      name: "v",
      protocol: "mcp",
      members: [{ agent_id: a, prefix: "a" }],
    });
    expect(v.status).toBe(201);
    expect((await call("PATCH", `/v1/agents/${a}`, { status: "inactive" })).status).toBe(200);
    expect((await call("DELETE", `/v1/agents/${a}`)).status).toBe(204);
    expect((await call("GET", `/v1/agents/${v.json.id}`)).json.members).toEqual([
      { agent_id: a, prefix: "a" },
    ]);
  });
});

describe("virtual MCP servers: tool_discovery", () => {
  it("defaults to list, sets search on a virtual agent, and goes back to list when it stops being virtual", async () => {
    const call = await asTenant();
    const a = await mcpAgent(call);
    expect((await call("GET", `/v1/agents/${a}`)).json.tool_discovery).toBe("list");
    const created = await call("POST", "/v1/agents", {
      name: "portal",
      protocol: "mcp",
      members: [{ agent_id: a, prefix: "a" }],
      tool_discovery: "search",
    });
    expect(created.status).toBe(201);
    expect(created.json.tool_discovery).toBe("search");
    const id = created.json.id as string;
    // A patch of something else keeps the mode.
    const renamed = await call("PATCH", `/v1/agents/${id}`, { name: "portal 2" });
    expect(renamed.json.tool_discovery).toBe("search");
    const listed = await call("PATCH", `/v1/agents/${id}`, { tool_discovery: "list" });
    expect(listed.json.tool_discovery).toBe("list");
    expect((await call("PATCH", `/v1/agents/${id}`, { tool_discovery: "search" })).json.tool_discovery).toBe(
      "search",
    );
    const plain = await call("PATCH", `/v1/agents/${id}`, {
      members: null,
      upstream_url: "https://mcp.example.com/other",
    });
    expect(plain.status).toBe(200);
    expect(plain.json).toMatchObject({ members: null, tool_discovery: "list" });
  });

  it("refuses search on an agent that is not virtual, and values that are not a mode", async () => {
    const call = await asTenant();
    const a = await mcpAgent(call);
    const onPlain = await call("PATCH", `/v1/agents/${a}`, { tool_discovery: "search" });
    expect(onPlain.status).toBe(400);
    expect(onPlain.json.error).toMatch(/tool_discovery "search" is only valid for a virtual MCP server/);
    const created = await call("POST", "/v1/agents", {
      name: "h",
      upstream_url: "https://api.example.com",
      tool_discovery: "search",
    });
    expect(created.status).toBe(400);
    for (const bad of ["SEARCH", "", null, 1, ["search"]]) {
      const res = await call("POST", "/v1/agents", {
        name: "v",
        protocol: "mcp",
        members: [{ agent_id: a, prefix: "a" }],
        tool_discovery: bad,
      });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(/tool_discovery/);
    }
    // Leaving members and asking for search in one patch is refused, nothing changed.
    const v = await call("POST", "/v1/agents", {
      name: "v",
      protocol: "mcp",
      members: [{ agent_id: a, prefix: "a" }],
      tool_discovery: "search",
    });
    const both = await call("PATCH", `/v1/agents/${v.json.id}`, {
      members: null,
      upstream_url: "https://mcp.example.com/x",
      tool_discovery: "search",
    });
    expect(both.status).toBe(400);
    expect((await call("GET", `/v1/agents/${v.json.id}`)).json).toMatchObject({ tool_discovery: "search" });
  });
});
