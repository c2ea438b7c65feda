import { useState } from "preact/hooks";
import { Options } from "../list/filter-bar.tsx";
import type { Agent } from "../types.ts";

export type ToolPrice = NonNullable<Agent["tool_prices"]>[number];

/** The networks a price is paid on. */
export const NETWORKS = ["base", "base-sepolia"] as const;

type Row = { tool: string; amount: string; network: string; pay_to: string; description: string };

const rowOf = (p: ToolPrice): Row => ({
  tool: p.tool,
  amount: p.amount,
  network: p.network ?? "",
  pay_to: p.pay_to ?? "",
  description: p.description ?? "",
});

/** A row as the API takes it: empty fields left out (they come from the agent's price). */
function priceOf(r: Row): ToolPrice {
  return {
    tool: r.tool.trim(),
    amount: r.amount.trim(),
    ...(r.network ? { network: r.network as NonNullable<ToolPrice["network"]> } : {}),
    ...(r.pay_to.trim() ? { pay_to: r.pay_to.trim() } : {}),
    ...(r.description.trim() ? { description: r.description.trim() } : {}),
  };
}

/**
 * An MCP agent's per-tool prices (docs/payments.md, MCP tool calls): one row per exposed name or
 * `prefix*`, first match wins, in order; network and payee default to the agent's price. An
 * agent with per-tool prices charges per tool only. Validation is the server's.
 */
export function ToolPricesField(props: { initial: ToolPrice[]; onChange: (p: ToolPrice[]) => void }) {
  const [rows, setRows] = useState<Row[]>(props.initial.map(rowOf));
  const update = (next: Row[]) => {
    setRows(next);
    props.onChange(next.filter((r) => r.tool.trim() !== "").map(priceOf));
  };
  const set = (at: number, change: Partial<Row>) =>
    update(rows.map((r, i) => (i === at ? { ...r, ...change } : r)));
  return (
    <fieldset aria-label="Tool prices">
      <legend>Tool prices (x402 inside MCP tool calls; first match wins, unpriced tools are free)</legend>
      {rows.map((r, i) => (
        <div class="row" key={i}>
          <label>
            Tool
            <input
              aria-label={`Tool of price ${i + 1}`}
              placeholder="search or gh__*"
              value={r.tool}
              onInput={(e) => set(i, { tool: e.currentTarget.value })}
            />
          </label>
          <label>
            Amount (smallest unit)
            <input
              aria-label={`Amount of price ${i + 1}`}
              inputMode="numeric"
              value={r.amount}
              onInput={(e) => set(i, { amount: e.currentTarget.value })}
            />
          </label>
          <label>
            Network
            <select
              aria-label={`Network of price ${i + 1}`}
              value={r.network}
              onChange={(e) => set(i, { network: e.currentTarget.value })}
            >
              <option value="">agent's price</option>
              <Options choices={NETWORKS} />
            </select>
          </label>
          <label class="grow">
            Pay to
            <input
              aria-label={`Pay to of price ${i + 1}`}
              placeholder="agent's price"
              value={r.pay_to}
              onInput={(e) => set(i, { pay_to: e.currentTarget.value })}
            />
          </label>
          <label class="grow">
            Description
            <input
              aria-label={`Description of price ${i + 1}`}
              value={r.description}
              onInput={(e) => set(i, { description: e.currentTarget.value })}
            />
          </label>
          <button type="button" class="secondary" onClick={() => update(rows.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <button
        type="button"
        class="secondary"
        onClick={() => update([...rows, { tool: "", amount: "", network: "", pay_to: "", description: "" }])}
      >
        Add a tool price
      </button>
    </fieldset>
  );
}
