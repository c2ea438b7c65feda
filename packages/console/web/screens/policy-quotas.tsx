import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import type { PolicyDocument, PolicyQuotaUse } from "../types.ts";
import { ErrorBox, fmtTime, formValues, useLoad, useSession } from "../ui.tsx";

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
      <form
        class="filters"
        aria-label="Quota lookup"
        onSubmit={(e) => {
          e.preventDefault();
          setKey(formValues(e.currentTarget).key ?? "");
          setTick((t) => t + 1);
        }}
      >
        <label>
          Key
          <input name="key" placeholder="e.g. a caller's sub" />
        </label>
        <div class="filter-buttons">
          <button type="submit">Show</button>
        </div>
      </form>
      <ErrorBox message={use.error} />
      <div class="table-wrap">
        <table data-testid="quotas">
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Limit</th>
              <th scope="col">Key</th>
              <th scope="col">Used</th>
              <th scope="col">Resets</th>
            </tr>
          </thead>
          <tbody>
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
                    <meter min={0} max={u.limit} value={u.used} aria-label={`rule ${r.rule} use`} /> {u.used}{" "}
                    / {u.limit}
                  </td>
                  <td>{fmtTime(u.resets_at)}</td>
                </tr>
              ));
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
