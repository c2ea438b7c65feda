import { useState } from "preact/hooks";
import { ApiError, unwrap } from "../api.ts";
import { href, navigate, useRoute } from "../router.ts";
import type { PutSettlementConfigBody, Settlement, SettlementConfig } from "../types.ts";
import {
  ErrorBox,
  fmtTime,
  formValues,
  messageOf,
  NotEnabled,
  Page,
  Pager,
  Picker,
  Status,
  useLoad,
  useSession,
} from "../ui.tsx";
import { useAgentNames } from "./invocations.tsx";

const SETTLEMENT = ["settled", "pending", "settlement_failed", "settled_upstream_failed"];

export function SettlementScreen() {
  const { caps } = useSession();
  if (!caps.surfaces.settlement) return <NotEnabled what="Settlement" />;
  return (
    <Page title="Settlement">
      {caps.posture.settlement_orchestration ? null : (
        <p class="notice">
          This deployment does not wire settle-then-forward: with a facilitator configured, priced calls
          answer 503.
        </p>
      )}
      <Config />
      <Payments />
    </Page>
  );
}

function Config() {
  const { api, caps } = useSession();
  // 404 is the API's "no configuration yet", not an error.
  const cfg = useLoad(async (): Promise<SettlementConfig | null> => {
    try {
      return await unwrap(api.GET("/v1/settlement/config"));
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null;
      throw e;
    }
  }, "settlement-config");
  const creds = useLoad(
    () =>
      caps.surfaces.credentials
        ? unwrap(api.GET("/v1/credentials", { params: { query: { limit: 100 } } })).then((l) => l.data)
        : Promise.resolve([]),
    "creds",
  );
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState<string>();
  const c = cfg.data;
  return (
    <form
      class="form"
      aria-label="Facilitator"
      key={c?.updated_at ?? "none"}
      onSubmit={async (e) => {
        e.preventDefault();
        const v = formValues(e.currentTarget);
        const body: PutSettlementConfigBody = {
          facilitator_url: v.facilitator_url ?? "",
          facilitator_credential_ref: v.facilitator_credential_ref ?? null,
        };
        setError(undefined);
        setSaved(undefined);
        try {
          await unwrap(api.PUT("/v1/settlement/config", { body }));
          setSaved("Saved.");
          cfg.reload();
        } catch (err) {
          setError(messageOf(err));
        }
      }}
    >
      <h2>Facilitator</h2>
      <ErrorBox message={cfg.error} />
      <p class="muted">
        {cfg.loading && cfg.data === undefined
          ? "Loading…"
          : c
            ? `Updated ${fmtTime(c.updated_at)}.`
            : "No facilitator configured: payments are verified but not settled."}
      </p>
      <label>
        Facilitator URL
        <input
          name="facilitator_url"
          type="url"
          required
          defaultValue={c?.facilitator_url ?? ""}
          placeholder="https://facilitator.example.com"
          autoComplete="off"
        />
      </label>
      <label>
        Facilitator credential
        <Picker
          name="facilitator_credential_ref"
          initial={c?.facilitator_credential_ref ?? ""}
          key={creds.data ? "loaded" : "loading"}
        >
          <option value="">none</option>
          {(creds.data ?? []).map((cr) => (
            <option key={cr.id} value={cr.id}>
              {cr.name} ({cr.kind}, …{cr.hint})
            </option>
          ))}
        </Picker>
      </label>
      <ErrorBox message={error} />
      {saved ? (
        <p class="ok" role="status">
          {saved}
        </p>
      ) : null}
      <div class="actions">
        <button type="submit">Save facilitator</button>
      </div>
    </form>
  );
}

/** Paid calls: invocations filtered on their settlement status. */
function Payments() {
  const { api } = useSession();
  const route = useRoute();
  const names = useAgentNames();
  const settlement = route.query.get("settlement") ?? "settled";
  const offset = Number(route.query.get("offset") ?? 0) || 0;
  const list = useLoad(
    () =>
      unwrap(
        api.GET("/v1/invocations", {
          // As typed in the URL: the API judges the value.
          params: { query: { settlement: settlement as Settlement["status"], offset, limit: 20 } },
        }),
      ),
    `${settlement}|${offset}`,
  );
  return (
    <section aria-labelledby="payments-title">
      <h2 id="payments-title">Payments</h2>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Settlement status
          <select
            value={settlement}
            onChange={(e) => navigate("/settlement", { settlement: e.currentTarget.value })}
          >
            {SETTLEMENT.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorBox message={list.error} />
      {list.data ? (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Invocation</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Amount</th>
                  <th scope="col" class="opt">
                    Payer
                  </th>
                  <th scope="col">Settlement</th>
                  <th scope="col" class="opt">
                    Transaction
                  </th>
                  <th scope="col" class="opt">
                    Created
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <a class="mono" href={href(`/invocations/${r.id}`)}>
                        …{r.id.slice(-12)}
                      </a>
                    </td>
                    <td>{names.data?.get(r.agent_id) ?? r.agent_id}</td>
                    <td class="mono">
                      {r.payment_amount ?? "—"} {r.payment_network ?? ""}
                    </td>
                    <td class="mono opt">{r.payment_payer ?? "—"}</td>
                    <td>{r.settlement ? <Status value={r.settlement.status} /> : "—"}</td>
                    <td class="mono opt">{r.settlement?.tx_hash ?? "—"}</td>
                    <td class="opt">{fmtTime(r.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {list.data.total === 0 ? <p class="empty">No payments with this status.</p> : null}
          <Pager path="/settlement" query={{ settlement }} {...list.data} />
        </>
      ) : null}
    </section>
  );
}
