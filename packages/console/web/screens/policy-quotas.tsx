import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { FilterBar, TableFrame } from "../list/index.ts";
import type { PolicyDocument, PolicyQuotaUse } from "../types.ts";
import { ErrorBox, fmtTime, useLoad, useSession } from "../ui.tsx";

/** From this share of its limit a quota reads as nearly spent (docs/console.md, Policy). */
const NEAR_PERCENT = 80;

/**
 * How spent a quota is: `spent` at its limit (the rule refuses the next call), `near` from
 * NEAR_PERCENT of it, else `ok`.
 */
function quotaState(used: number, limit: number): "ok" | "near" | "spent" {
  if (used >= limit) return "spent";
  // In whole numbers: 0.8 * 15 is 12.000000000000002 in floating point.
  return used * 100 >= limit * NEAR_PERCENT ? "near" : "ok";
}

/**
 * A quota's gauge, coloured by the browser as `quotaState` reads it: a `<meter>` whose optimum is
 * 0 draws a value above `low` as a warning and above `high` as bad. Counts are whole, so each
 * boundary sits half a call below the first count of its state. The word beside it says the same
 * for those who do not see the colour.
 */
function QuotaGauge({ rule, used, limit }: { rule: string; used: number; limit: number }) {
  const state = quotaState(used, limit);
  const nearFrom = Math.ceil((limit * NEAR_PERCENT) / 100);
  return (
    <span data-state={state}>
      <meter
        min={0}
        max={limit}
        low={nearFrom - 0.5}
        high={limit - 0.5}
        optimum={0}
        value={used}
        aria-label={`rule ${rule} use`}
      />{" "}
      {used} / {limit}
      {state === "ok" ? null : (
        <>
          {" "}
          <span class={`badge badge-quota-${state}`}>{state === "spent" ? "spent" : "near the limit"}</span>
        </>
      )}
    </span>
  );
}

/** A rule's counters take a row each, its own cells only on the first: the rows are drawn here. */
const COLUMNS = ["Rule", "Limit", "Key", "Used", "Resets"].map((head) => ({ head }));

/** A `limit` rule of the stored document, with its 1-based position. */
type LimitRule = { rule: string; requests: number; per: string; key: string };

function limitRulesOf(doc: PolicyDocument | undefined): LimitRule[] {
  const out: LimitRule[] = [];
  (doc?.rules ?? []).forEach((r, i) => {
    const rule = r as { action?: unknown; limit?: { requests?: unknown; per?: unknown; key?: unknown } };
    if (rule?.action !== "limit" || !rule.limit) return;
    out.push({
      rule: String(i + 1),
      requests: Number(rule.limit.requests),
      per: String(rule.limit.per),
      key: typeof rule.limit.key === "string" ? rule.limit.key : "principal.sub",
    });
  });
  return out;
}

/**
 * Each `limit` rule of the stored document with its counters in the current window
 * (GET /v1/policy/quotas): the keys with use, or a key looked up by value.
 */
export function Quotas({ doc }: { doc: PolicyDocument | undefined }) {
  const { api } = useSession();
  const [key, setKey] = useState("");
  const [tick, setTick] = useState(0);
  const rules = limitRulesOf(doc);
  const use = useLoad(
    () =>
      rules.length === 0
        ? Promise.resolve({ data: [] as PolicyQuotaUse[] })
        : unwrap(api.GET("/v1/policy/quotas", { params: { query: key ? { key } : {} } })),
    `${doc?.version}-${rules.length}-${key}-${tick}`,
  );
  if (rules.length === 0) return null;
  return (
    <section aria-labelledby="quotas-title">
      <h2 id="quotas-title">Quotas</h2>
      <p class="muted">
        Current use of each <code>limit</code> rule in its window (UTC). Without a key, the keys with use (at
        most 100 per rule).
      </p>
      <FilterBar
        label="Quota lookup"
        apply="Show"
        onApply={(v) => {
          setKey(v.key ?? "");
          setTick((t) => t + 1);
        }}
      >
        <label>
          Key
          <input name="key" placeholder="e.g. a caller's sub" />
        </label>
      </FilterBar>
      <ErrorBox message={use.error} />
      <TableFrame testid="quotas" columns={COLUMNS}>
        {rules.map((r) => {
          const counters = (use.data?.data ?? []).filter((u) => u.rule === r.rule);
          const head = (
            <>
              <td>{r.rule}</td>
              <td>
                {r.requests} per {r.per}
                <br />
                <code class="small">{r.key}</code>
              </td>
            </>
          );
          if (counters.length === 0) {
            return (
              <tr key={r.rule} data-rule={r.rule}>
                {head}
                <td colSpan={3} class="muted">
                  {use.data ? "no use in this window" : "Loading…"}
                </td>
              </tr>
            );
          }
          return counters.map((u, i) => (
            <tr key={`${r.rule}-${u.key}`} data-rule={r.rule}>
              {i === 0 ? head : <td colSpan={2} />}
              <td>
                <code class="small">{u.key}</code>
              </td>
              <td>
                <QuotaGauge rule={r.rule} used={u.used} limit={u.limit} />
              </td>
              <td>{fmtTime(u.resets_at)}</td>
            </tr>
          ));
        })}
      </TableFrame>
    </section>
  );
}
