// @stores once: per-tool prices are agent fields; the assertions read them back through the API.
import { client, newTenant, serveApp, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

let app: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp);
});
afterAll(() => app?.close());

const PAY_TO = "0x3333333333333333333333333333333333333333";
const SEPOLIA_USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";

async function asTenant(tenant = newTenant()) {
  return client(app.url, await token(tenant, "user-1"));
}

describe("tool_prices on MCP agents", () => {
  it("stores per-tool prices on plain and virtual MCP agents, patches and clears them", async () => {
    const call = await asTenant();
    const toolPrices = [
      { tool: "search", amount: "2500", network: "eip155:84532", asset: SEPOLIA_USDC, pay_to: PAY_TO },
      { tool: "gh__*", amount: "100", description: "GitHub tools" },
    ];
    const plain = await call("POST", "/v1/agents", {
      name: "tools",
      protocol: "mcp",
      upstream_url: "https://mcp.example.com/mcp",
      price: { amount: "1", asset: "USDC", network: "base-sepolia", pay_to: PAY_TO },
      tool_prices: toolPrices,
    });
    expect(plain.status).toBe(201);
    expect(plain.json.tool_prices).toEqual(toolPrices);
    expect((await call("GET", `/v1/agents/${plain.json.id}`)).json.tool_prices).toEqual(toolPrices);

    const virtual = await call("POST", "/v1/agents", {
      name: "portal",
      protocol: "mcp",
      members: [{ agent_id: plain.json.id, prefix: "gh" }],
      tool_prices: [{ tool: "gh__search", amount: "7", pay_to: PAY_TO }],
    });
    expect(virtual.status).toBe(201);
    expect(virtual.json.tool_prices).toEqual([{ tool: "gh__search", amount: "7", pay_to: PAY_TO }]);

    const patched = await call("PATCH", `/v1/agents/${plain.json.id}`, {
      tool_prices: [{ tool: "*", amount: "3" }],
    });
    expect(patched.status).toBe(200);
    expect(patched.json.tool_prices).toEqual([{ tool: "*", amount: "3" }]);
    // Other fields leave them alone; null clears them.
    expect((await call("PATCH", `/v1/agents/${plain.json.id}`, { name: "t2" })).json.tool_prices).toEqual([
      { tool: "*", amount: "3" },
    ]);
    const cleared = await call("PATCH", `/v1/agents/${plain.json.id}`, { tool_prices: null });
    expect(cleared.json.tool_prices).toBeNull();
    const httpAgent = await call("POST", "/v1/agents", {
      name: "h",
      upstream_url: "https://api.example.com",
    });
    expect(httpAgent.json.tool_prices).toBeNull();
  });

  it("refuses bad tool prices with a 400 naming the field and the rule", async () => {
    const call = await asTenant();
    const mcp = { name: "m", protocol: "mcp", upstream_url: "https://mcp.example.com/mcp" };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...mcp, tool_prices: [] }, /tool_prices: must name at least one tool/],
      [{ ...mcp, tool_prices: [{ tool: "a", amount: "1" }] }, /tool_prices\.0: pay_to is required/],
      [{ ...mcp, tool_prices: [{ tool: "a", amount: "1.5", pay_to: PAY_TO }] }, /tool_prices\.0\.amount/],
      [{ ...mcp, tool_prices: [{ tool: "a*b", amount: "1", pay_to: PAY_TO }] }, /tool_prices\.0\.tool/],
      [{ ...mcp, tool_prices: [{ tool: "a", amount: "1", pay_to: "0x12" }] }, /tool_prices\.0\.pay_to/],
      [{ ...mcp, tool_prices: [{ tool: "a", amount: "1", pay_to: PAY_TO, x: 1 }] }, /unknown field/],
      [{ ...mcp, tool_prices: [{ tool: "a", amount: "1", pay_to: PAY_TO, network: "eth" }] }, /network/],
      [
        {
          ...mcp,
          tool_prices: [{ tool: "a", amount: "1", pay_to: PAY_TO, network: "base", asset: SEPOLIA_USDC }],
        },
        /tool_prices\.0: asset must be "USDC" or 0x8335/,
      ],
      [
        {
          name: "h",
          upstream_url: "https://api.example.com",
          tool_prices: [{ tool: "a", amount: "1", pay_to: PAY_TO }],
        },
        /tool_prices is only valid for protocol mcp/,
      ],
    ];
    for (const [body, message] of cases) {
      const res = await call("POST", "/v1/agents", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.json)).toEqual(["error"]);
      expect(res.json.error).toMatch(message);
    }
    // Clearing the price an entry relied on for its payee is refused too.
    const ok = await call("POST", "/v1/agents", {
      ...mcp,
      price: { amount: "1", asset: "USDC", network: "base", pay_to: PAY_TO },
      tool_prices: [{ tool: "a", amount: "1" }],
    });
    expect(ok.status).toBe(201);
    const dropped = await call("PATCH", `/v1/agents/${ok.json.id}`, { price: null });
    expect(dropped.status).toBe(400);
    expect(dropped.json.error).toMatch(/tool_prices\.0: pay_to is required/);
  });

  it("another tenant's agent is 404", async () => {
    const call = await asTenant();
    const other = await asTenant();
    const created = await call("POST", "/v1/agents", {
      name: "m",
      protocol: "mcp",
      upstream_url: "https://mcp.example.com/mcp",
      tool_prices: [{ tool: "a", amount: "1", pay_to: PAY_TO }],
    });
    const res = await other("PATCH", `/v1/agents/${created.json.id}`, { tool_prices: null });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: "agent not found" });
  });
});
