// @stores both: the list's filters and paging are SQL.
import { newId } from "@gw/core";
import { invocationRepo, type NewInvocation } from "@gw/invocations";
import { client, newTenant, serveApp, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

let app: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp);
});
afterAll(() => app?.close());

describe("invocations: list", () => {
  it("lists the tenant's invocations with filters and a total, without bodies", async () => {
    const tenant = newTenant();
    const call = client(app.url, await token(tenant));
    const agent = (await call("POST", "/v1/agents", { name: "a", upstream_url: "https://api.example.com/x" }))
      .json.id as string;
    const id = newId("inv");
    // The proxy writes invocations; here the row is written the way it does.
    await invocationRepo.insert(app.rt.store.db, tenant, {
      id,
      agentId: agent,
      mode: "streaming",
      status: "succeeded",
    });
    const all = await call("GET", `/v1/invocations?agent_id=${agent}`);
    expect(all.status).toBe(200);
    expect(all.json.total).toBe(1);
    expect(all.json.data[0].id).toBe(id);
    const none = await call("GET", `/v1/invocations?agent_id=${agent}&status=pending`);
    expect(none.json).toMatchObject({ total: 0, data: [] });
    const other = client(app.url, await token(newTenant()));
    expect((await other("GET", "/v1/invocations")).json.total).toBe(0);
  });
});

describe("invocations: filtered by what was called", () => {
  /** A tenant with one agent and the calls given (the fields the proxy records), each id in order. */
  async function tenantWithCalls(calls: Array<Partial<NewInvocation>>) {
    const tenant = newTenant();
    const call = client(app.url, await token(tenant));
    const agent = (await call("POST", "/v1/agents", { name: "a", upstream_url: "https://api.example.com/x" }))
      .json.id as string;
    const ids: string[] = [];
    for (const fields of calls) {
      const id = newId("inv");
      await invocationRepo.insert(app.rt.store.db, tenant, {
        id,
        agentId: agent,
        mode: "streaming",
        status: "succeeded",
        ...fields,
      });
      ids.push(id);
    }
    return { call, ids };
  }
  const idsOf = (res: { json: { data: Array<{ id: string }> } }) => res.json.data.map((r) => r.id).sort();

  it("method matches an MCP or an A2A method, tool an MCP tool; together both must hold", async () => {
    const { call, ids } = await tenantWithCalls([
      { mcpMethod: "tools/call", mcpTool: "search" },
      { mcpMethod: "tools/call", mcpTool: "fetch" },
      { mcpMethod: "tools/list" },
      { a2aMethod: "SendMessage" },
      {},
    ]);
    const [search, fetch, list, send] = ids;
    const get = (query: string) => call("GET", `/v1/invocations?${query}`);

    const calls = await get("method=tools/call");
    expect(calls.status).toBe(200);
    expect(calls.json.total).toBe(2);
    expect(idsOf(calls)).toEqual([search, fetch].sort());
    expect(idsOf(await get("method=tools%2Flist"))).toEqual([list]);
    const a2a = await get("method=SendMessage");
    expect(idsOf(a2a)).toEqual([send]);
    expect(a2a.json.data[0]).toMatchObject({ a2a_method: "SendMessage", mcp_method: null });
    const tool = await get("tool=search");
    expect(idsOf(tool)).toEqual([search]);
    expect(tool.json.data[0]).toMatchObject({ mcp_method: "tools/call", mcp_tool: "search" });
    expect(idsOf(await get("method=tools/call&tool=fetch"))).toEqual([fetch]);
    // Exact values: no prefix, no case folding, no match across the two fields.
    for (const query of [
      "method=tools",
      "method=TOOLS/CALL",
      "tool=sea",
      "method=search",
      "tool=tools/call",
    ]) {
      expect((await get(query)).json, query).toMatchObject({ total: 0, data: [] });
    }
    // Empty values are no filter, as for the other text filters.
    expect((await get("method=&tool=")).json.total).toBe(5);
  });

  it("refuses a method or tool that is too long or holds a NUL, naming it", async () => {
    const { call } = await tenantWithCalls([]);
    const cases: Array<[string, string]> = [
      [`method=${"m".repeat(129)}`, "method must be at most 128 bytes"],
      [`tool=${"t".repeat(257)}`, "tool must be at most 256 bytes"],
      // Bytes, not characters: 65 two-byte characters are 130 bytes.
      [`method=${encodeURIComponent("é".repeat(65))}`, "method must be at most 128 bytes"],
      ["method=tools%00call", "method must not contain NUL characters"],
      ["tool=se%00arch", "tool must not contain NUL characters"],
    ];
    for (const [query, error] of cases) {
      const res = await call("GET", `/v1/invocations?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json, query).toEqual({ error });
    }
    // The longest values allowed are taken.
    const longest = await call("GET", `/v1/invocations?method=${"m".repeat(128)}&tool=${"t".repeat(256)}`);
    expect(longest.status).toBe(200);
    const twice = await call("GET", "/v1/invocations?tool=a&tool=b");
    expect(twice.json).toEqual({ error: 'query parameter "tool" given more than once' });
  });

  it("never shows another tenant's calls of the same method and tool", async () => {
    const a = await tenantWithCalls([
      { mcpMethod: "tools/call", mcpTool: "search" },
      { a2aMethod: "SendMessage" },
    ]);
    const b = await tenantWithCalls([{ mcpMethod: "tools/call", mcpTool: "search" }]);
    for (const query of ["method=tools/call", "tool=search", "method=tools/call&tool=search"]) {
      const res = await b.call("GET", `/v1/invocations?${query}`);
      expect(idsOf(res), query).toEqual(b.ids);
      expect(JSON.stringify(res.json)).not.toMatch(new RegExp(a.ids.join("|")));
    }
    expect((await b.call("GET", "/v1/invocations?method=SendMessage")).json).toMatchObject({
      total: 0,
      data: [],
    });
    expect(idsOf(await a.call("GET", "/v1/invocations?tool=search"))).toEqual([a.ids[0]]);
  });
});
