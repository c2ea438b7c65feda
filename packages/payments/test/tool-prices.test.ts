import { describe, expect, it } from "vitest";
import { callPrice, priceMeta, toolPricesProblem, toolPriceTable } from "../src/index.ts";

const PAY_TO = "0x3333333333333333333333333333333333333333";
const PRICE = { amount: "7", asset: "USDC", network: "base", pay_to: PAY_TO } as const;

describe("per-tool prices", () => {
  it("first match wins, a trailing * is a prefix, an unpriced tool is free", () => {
    const agent = {
      price: null,
      toolPrices: [
        { tool: "gh__issue_delete", amount: "900", pay_to: PAY_TO },
        { tool: "gh__*", amount: "100", pay_to: PAY_TO },
        { tool: "search", amount: "50", network: "eip155:84532" as const, pay_to: PAY_TO },
      ],
    };
    const table = toolPriceTable(agent);
    expect(table?.match("gh__issue_delete")?.price.amount).toBe("900");
    expect(table?.match("gh__issue_list")?.price.amount).toBe("100");
    expect(table?.match("search")?.price).toEqual({
      amount: "50",
      asset: "USDC",
      network: "base-sepolia",
      pay_to: PAY_TO,
    });
    expect(table?.match("gh_")).toBeNull();
    expect(table?.match("other")).toBeNull();
    // Built once per agent row object.
    expect(toolPriceTable(agent)).toBe(table);
    expect(toolPriceTable({ price: PRICE, toolPrices: null })).toBeNull();
  });

  it("omitted fields come from the agent's price; a payee is required", () => {
    const table = toolPriceTable({ price: PRICE, toolPrices: [{ tool: "a", amount: "1" }] });
    expect(table?.match("a")?.price).toEqual({ amount: "1", asset: "USDC", network: "base", pay_to: PAY_TO });
    expect(toolPricesProblem([{ tool: "a", amount: "1" }], null)).toBe(
      "tool_prices.0: pay_to is required when the agent has no price",
    );
    expect(
      toolPricesProblem(
        [{ tool: "a", amount: "1", asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" }],
        PRICE,
      ),
    ).toMatch(/^tool_prices\.0: asset must be "USDC" or 0x833589/);
    expect(
      toolPricesProblem(
        [
          {
            tool: "a",
            amount: "1",
            network: "base-sepolia",
            asset: "0x036cbd53842c5426634e7929541ec2318f3dcf7e",
          },
        ],
        PRICE,
      ),
    ).toBeNull();
  });

  it("shows prices in v2 forms, and policy's call.price follows the same table", () => {
    const terms = toolPriceTable({ price: PRICE, toolPrices: [{ tool: "a", amount: "5" }] })?.match("a");
    expect(terms && priceMeta(terms)).toEqual({
      amount: "5",
      asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      network: "eip155:8453",
    });
    const mcp = { protocol: "mcp", price: PRICE, toolPrices: [{ tool: "a", amount: "5" }] };
    expect(callPrice(mcp, "a")?.amount).toBe("5");
    // Per tool only: the agent's own price is not charged for an unpriced tool.
    expect(callPrice(mcp, "b")).toBeNull();
    expect(callPrice({ protocol: "http", price: PRICE, toolPrices: null }, null)?.amount).toBe("7");
    expect(callPrice({ protocol: "http", price: null, toolPrices: null }, null)).toBeNull();
  });
});
