import type { AgentPrice } from "@gw/db";

/**
 * The amount a call costs: the per-tool override of an MCP `tools/call` when the price names that
 * tool, else the agent's amount. Smallest-unit decimal string.
 */
export function amountFor(price: AgentPrice, tool: string | null | undefined): string {
  if (tool && price.tools && Object.hasOwn(price.tools, tool)) {
    const override = price.tools[tool];
    if (override !== undefined) return override;
  }
  return price.amount;
}
