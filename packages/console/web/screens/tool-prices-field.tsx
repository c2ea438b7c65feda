import { useState } from "preact/hooks";
import { Options } from "../list/index.ts";
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
          <PriceInput label="Tool" field="tool" row={r} at={i} set={set} placeholder="search or gh__*" />
          <PriceInput
            label="Amount (smallest unit)"
            short="Amount"
            field="amount"
            row={r}
            at={i}
            set={set}
            numeric
          />
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
          <PriceInput
            label="Pay to"
            field="pay_to"
            row={r}
            at={i}
            set={set}
            placeholder="agent's price"
            grow
          />
          <PriceInput label="Description" field="description" row={r} at={i} set={set} grow />
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

/** One text field of a price row, named for screen readers by the row's place (`Tool of price 2`). */
function PriceInput(props: {
  label: string;
  short?: string;
  field: Exclude<keyof Row, "network">;
  row: Row;
  at: number;
  set: (at: number, change: Partial<Row>) => void;
  placeholder?: string;
  numeric?: boolean;
  grow?: boolean;
}) {
  const { field, at } = props;
  return (
    <label class={props.grow ? "grow" : undefined}>
      {props.label}
      <input
        aria-label={`${props.short ?? props.label} of price ${at + 1}`}
        placeholder={props.placeholder}
        inputMode={props.numeric ? "numeric" : undefined}
        value={props.row[field]}
        onInput={(e) => props.set(at, { [field]: e.currentTarget.value })}
      />
    </label>
  );
}
