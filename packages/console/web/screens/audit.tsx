import { AUDIT_ACTIONS } from "@gw/client";
import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { jsonDiff } from "../json-diff.ts";
import {
  FilterBar,
  FilterPicker,
  FilterText,
  filtersOf,
  PagedTable,
  TimeRange,
  usePage,
  WithId,
} from "../list/index.ts";
import { useRoute } from "../router.ts";
import type { AuditEvent, AuditVerify } from "../types.ts";
import { fmtTime, Page, useAction, useSession } from "../ui.tsx";

const READ_SCOPE = "audit:read";
const FILTERS = ["action", "actor", "resource_id", "since", "until"] as const;

/**
 * The tenant's audit log (docs/audit.md): who changed what, newest first, with filters, and the
 * hash chain's verification on request.
 */
export function AuditScreen() {
  const { api, me } = useSession();
  const route = useRoute();
  const query = filtersOf(route.query, FILTERS);
  const canRead = me.scopes.includes(READ_SCOPE);
  // Without the scope nothing is asked: the API's 403 would only say what the page says.
  const list = usePage(
    async (page) =>
      canRead
        ? unwrap(
            api.GET("/v1/audit", {
              params: { query: { ...query, action: query.action as AuditEvent["action"], ...page } },
            }),
          )
        : { data: [], limit: 0, offset: 0, total: 0 },
    `${canRead}-${route.query.toString()}`,
  );
  if (!canRead) {
    return (
      <Page title="Audit">
        <p class="muted">
          Reading the audit log needs scope <code>{READ_SCOPE}</code> in your token.
        </p>
      </Page>
    );
  }
  return (
    <Page title="Audit" actions={<Verify />}>
      <FilterBar label="Audit filters" path="/audit">
        <FilterPicker label="Action" name="action" value={query.action} any choices={AUDIT_ACTIONS} />
        <FilterText label="Actor" name="actor" value={query.actor} />
        <FilterText label="Resource" name="resource_id" value={query.resource_id} />
        <TimeRange since={query.since} until={query.until} />
      </FilterBar>
      <PagedTable
        list={list}
        rowKey={(e) => e.id}
        rowProps={(e) => ({ "data-audit": e.id })}
        columns={[
          {
            head: "When",
            cell: (e) => <WithId id={e.request_id}>{fmtTime(e.created_at)}</WithId>,
          },
          { head: "Actor", cell: (e) => e.actor },
          { head: "Action", cell: (e) => <code>{e.action}</code> },
          { head: "Resource", cell: (e) => <code class="small">{e.resource_id}</code> },
          { head: "Changes", cell: (e) => <Changes changes={e.changes} /> },
        ]}
        empty="No events match."
        path="/audit"
        query={query}
      />
    </Page>
  );
}

/**
 * An event's changes as the paths that differ (`document.rules[0].action: "warn" → "deny"`), not
 * the whole values before and after; a secret field by its name only, as the API records it.
 */
function Changes({ changes }: { changes: AuditEvent["changes"] }) {
  const entries = Object.entries(changes);
  if (entries.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="changes">
      {entries.map(([field, c]) => {
        if (!("from" in c || "to" in c)) {
          return (
            <li key={field} data-path={field} data-change="secret">
              <code>{field}</code>
              <span class="muted"> (secret: changed, value not recorded)</span>
            </li>
          );
        }
        const diff = jsonDiff(c.from ?? null, c.to ?? null, field);
        // A field recorded with no difference inside (a document saved unchanged, its keys reordered).
        if (diff.length === 0) {
          return (
            <li key={field} data-path={field} data-change="unchanged">
              <code>{field}</code> <span class="muted">unchanged</span>
            </li>
          );
        }
        return diff.map((d) => (
          <li key={d.path} data-path={d.path} data-change={d.kind}>
            <code>{d.path}</code>
            {d.kind === "changed" ? (
              <>
                : <del>{json(d.from)}</del> → <ins>{json(d.to)}</ins>
              </>
            ) : d.kind === "added" ? (
              <>
                {" "}
                added: <ins>{json(d.to)}</ins>
              </>
            ) : (
              <>
                {" "}
                removed: <del>{json(d.from)}</del>
              </>
            )}
          </li>
        ));
      })}
    </ul>
  );
}

const json = (v: unknown) => JSON.stringify(v ?? null);

/** GET /v1/audit/verify on request: it walks the whole chain. */
function Verify() {
  const { api } = useSession();
  const [result, setResult] = useState<AuditVerify>();
  const { error, run } = useAction();
  const verify = () => {
    setResult(undefined);
    return run(async () => setResult(await unwrap(api.GET("/v1/audit/verify"))));
  };
  return (
    <span class="audit-verify">
      <button type="button" class="secondary" onClick={verify}>
        Verify chain
      </button>{" "}
      {result ? (
        <span role="status" data-valid={String(result.valid)}>
          {result.valid
            ? `Chain intact: ${result.events} events`
            : `Chain broken at ${result.first_bad_id} (${result.events} events)`}
        </span>
      ) : null}
      {error ? <span role="alert">{error}</span> : null}
    </span>
  );
}
