import { useState } from "preact/hooks";
import { useAgentNames } from "../agent-names.tsx";
import { ApiError, unwrap } from "../api.ts";
import { FilterBar, FilterSelect, PagedTable, usePage } from "../list/index.ts";
import { href, navigate, useRoute } from "../router.ts";
import type { PutSettlementConfigBody, Settlement, SettlementConfig } from "../types.ts";
import { Done, ErrorBox, fmtTime, formValues, Page, Status, useAction, useLoad, useSession } from "../ui.tsx";
import { CredentialField } from "./credential-field.tsx";

const SETTLEMENT = ["settled", "pending", "settlement_failed", "settled_upstream_failed"];

export function SettlementScreen() {
  const { caps } = useSession();
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
  const { api } = useSession();
  // 404 is the API's "no configuration yet", not an error.
  const cfg = useLoad(async (): Promise<SettlementConfig | null> => {
    try {
      return await unwrap(api.GET("/v1/settlement/config"));
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null;
      throw e;
    }
  }, "settlement-config");
  const { error, run } = useAction();
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
        setSaved(undefined);
        await run(async () => {
          await unwrap(api.PUT("/v1/settlement/config", { body }));
          setSaved("Saved.");
          cfg.reload();
        });
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
      <CredentialField
        label="Facilitator credential"
        name="facilitator_credential_ref"
        initial={c?.facilitator_credential_ref}
      />
      <ErrorBox message={error} />
      <Done message={saved} />
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
  const list = usePage(
    (page) =>
      unwrap(
        api.GET("/v1/invocations", {
          // As typed in the URL: the API judges the value.
          params: { query: { settlement: settlement as Settlement["status"], ...page } },
        }),
      ),
    settlement,
  );
  return (
    <section aria-labelledby="payments-title">
      <h2 id="payments-title">Payments</h2>
      <FilterBar>
        <FilterSelect
          label="Settlement status"
          value={settlement}
          choices={SETTLEMENT}
          onChange={(s) => navigate("/settlement", { settlement: s })}
        />
      </FilterBar>
      <PagedTable
        list={list}
        rowKey={(r) => r.id}
        columns={[
          {
            head: "Invocation",
            cell: (r) => (
              <a class="mono" href={href(`/invocations/${r.id}`)}>
                …{r.id.slice(-12)}
              </a>
            ),
          },
          { head: "Agent", cell: (r) => names.data?.get(r.agent_id) ?? r.agent_id },
          {
            head: "Amount",
            cellClass: "mono",
            cell: (r) => (
              <>
                {r.payment_amount ?? "—"} {r.payment_network ?? ""}
              </>
            ),
          },
          { head: "Payer", class: "opt", cellClass: "mono opt", cell: (r) => r.payment_payer ?? "—" },
          { head: "Settlement", cell: (r) => (r.settlement ? <Status value={r.settlement.status} /> : "—") },
          {
            head: "Transaction",
            class: "opt",
            cellClass: "mono opt",
            cell: (r) => r.settlement?.tx_hash ?? "—",
          },
          { head: "Created", class: "opt", cell: (r) => fmtTime(r.created_at) },
        ]}
        empty="No payments with this status."
        path="/settlement"
        query={{ settlement }}
      />
    </section>
  );
}
