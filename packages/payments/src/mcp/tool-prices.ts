import type { AgentPrice, AgentToolPrice } from "@gw/db";
import { NETWORKS, type PriceNetwork } from "../networks.ts";

/** What one priced tool costs, as a price of the HTTP path (one network, its USDC, one payee). */
export type ToolTerms = {
  readonly price: AgentPrice;
  /** The entry's description, else null (the challenge then describes the tool by name). */
  readonly description: string | null;
};

/** An agent's per-tool prices, resolved once per agent row: first match wins, unpriced is free. */
export type ToolPriceTable = {
  /** The terms of a call of this exposed name, or null when the tool is free. */
  match(name: string): ToolTerms | null;
  /** Whether any tool is priced (an agent with an empty table charges nothing). */
  readonly size: number;
};

type Priced = { toolPrices: AgentToolPrice[] | null; price: AgentPrice | null };

const CAIP2: Readonly<Record<string, PriceNetwork>> = {
  "eip155:8453": "base",
  "eip155:84532": "base-sepolia",
};
/** Names a table remembers the answer for (a catalog is at most a few hundred tools). */
const MEMO_MAX = 1024;

/**
 * Resolves one entry against the agent's price: a network in either spelling, the asset of that
 * network, a payee. Returns the reason it cannot be resolved (the message of the 400) or its terms.
 */
function resolve(entry: AgentToolPrice, price: AgentPrice | null): ToolTerms | string {
  const named = entry.network ?? price?.network ?? "base";
  const network = CAIP2[named] ?? (named as PriceNetwork);
  const net = NETWORKS[network];
  if (!net) return "network must be base or base-sepolia";
  if (
    entry.asset !== undefined &&
    entry.asset !== "USDC" &&
    entry.asset.toLowerCase() !== net.asset.toLowerCase()
  )
    return `asset must be "USDC" or ${net.asset} (the USDC contract on ${network})`;
  const payTo = entry.pay_to ?? price?.pay_to;
  if (payTo === undefined) return "pay_to is required when the agent has no price";
  return {
    price: { amount: entry.amount, asset: "USDC", network, pay_to: payTo },
    description: entry.description ?? null,
  };
}

/**
 * The cross-field rules of `tool_prices` against the agent's `price` (a 400 names the entry), or
 * null when every entry resolves.
 */
export function toolPricesProblem(
  toolPrices: readonly AgentToolPrice[],
  price: AgentPrice | null,
): string | null {
  for (const [i, entry] of toolPrices.entries()) {
    const r = resolve(entry, price);
    if (typeof r === "string") return `tool_prices.${i}: ${r}`;
  }
  return null;
}

const tables = new WeakMap<object, ToolPriceTable>();

/**
 * The per-tool price table of an agent row, built once per row object (the proxy's agent cache
 * hands out one object per version of an agent), or null when the agent prices no tool.
 */
export function toolPriceTable(agent: Priced): ToolPriceTable | null {
  if (!agent.toolPrices || agent.toolPrices.length === 0) return null;
  let table = tables.get(agent);
  if (!table) {
    table = buildTable(agent.toolPrices, agent.price);
    tables.set(agent, table);
  }
  return table;
}

function buildTable(entries: readonly AgentToolPrice[], price: AgentPrice | null): ToolPriceTable {
  const rules: Array<{ exact: string | null; prefix: string; terms: ToolTerms }> = [];
  for (const entry of entries) {
    const terms = resolve(entry, price);
    // A row written before a rule tightened cannot price a call it does not describe: skipped.
    if (typeof terms === "string") continue;
    const star = entry.tool.endsWith("*");
    rules.push({ exact: star ? null : entry.tool, prefix: star ? entry.tool.slice(0, -1) : "", terms });
  }
  const memo = new Map<string, ToolTerms | null>();
  return {
    size: rules.length,
    match(name) {
      const known = memo.get(name);
      if (known !== undefined) return known;
      let found: ToolTerms | null = null;
      for (const r of rules) {
        if (r.exact === null ? name.startsWith(r.prefix) : r.exact === name) {
          found = r.terms;
          break;
        }
      }
      if (memo.size < MEMO_MAX) memo.set(name, found);
      return found;
    },
  };
}
