import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { FilterButtons, TimeRange } from "../filters.tsx";
import { navigate, useRoute } from "../router.ts";
import type { AuditEvent, AuditVerify } from "../types.ts";
import {
  ErrorBox,
  fmtTime,
  formValues,
  messageOf,
  NotEnabled,
  Page,
  Pager,
  Picker,
  toRfc3339,
  useLoad,
  useSession,
} from "../ui.tsx";

const READ_SCOPE = "audit:read";
const ACTIONS: AuditEvent["action"][] = [
  "agent.create",
  "agent.update",
  "agent.delete",
  "credential.create",
  "credential.rotate",
  "credential.delete",
  "policy.replace",
  "policy.delete",
  "settlement.replace",
  "tools.pin",
  "tools.unpin",
  "tools.refresh",
  "approval.approve",
  "approval.deny",
];
const FILTERS = ["action", "actor", "resource_id", "since", "until"] as const;

/**
 * The tenant's audit log (docs/audit.md): who changed what, newest first, with filters, and the
 * hash chain's verification on request.
 */
export function AuditScreen() {
  const { api, caps, me } = useSession();
  const route = useRoute();
  const query = Object.fromEntries(
    FILTERS.flatMap((k) => {
      const v = route.query.get(k);
      return v ? [[k, v]] : [];
    }),
  ) as Partial<Record<(typeof FILTERS)[number], string>>;
  const offset = Number(route.query.get("offset") ?? 0) || 0;
  const canRead = me.scopes.includes(READ_SCOPE);
  // Without the scope nothing is asked: the API's 403 would only say what the page says.
  const list = useLoad(
    async () =>
      canRead
        ? unwrap(
            api.GET("/v1/audit", {
              params: {
                query: { ...query, action: query.action as AuditEvent["action"], offset, limit: 20 },
              },
            }),
          )
        : null,
    `${canRead}-${route.query.toString()}`,
  );
  if (caps.surfaces.audit === false) return <NotEnabled what="The audit log" />;
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
      <form
        class="filters"
        aria-label="Audit filters"
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          navigate("/audit", { ...v, since: toRfc3339(v.since), until: toRfc3339(v.until) });
        }}
      >
        <label>
          Action
          <Picker name="action" initial={query.action ?? ""} key={query.action}>
            <option value="">any</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </Picker>
        </label>
        <label>
          Actor
          <input type="text" name="actor" defaultValue={query.actor ?? ""} />
        </label>
        <label>
          Resource
          <input type="text" name="resource_id" defaultValue={query.resource_id ?? ""} />
        </label>
        <TimeRange since={query.since} until={query.until} />
        <FilterButtons path="/audit" />
      </form>
      <ErrorBox message={list.error} />
      {list.data ? (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Action</th>
                  <th scope="col">Resource</th>
                  <th scope="col">Changes</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((e) => (
                  <tr key={e.id} data-audit={e.id}>
                    <td>
                      {fmtTime(e.created_at)}
                      <br />
                      <code class="small">{e.request_id}</code>
                    </td>
                    <td>{e.actor}</td>
                    <td>
                      <code>{e.action}</code>
                    </td>
                    <td>
                      <code class="small">{e.resource_id}</code>
                    </td>
                    <td>
                      <Changes changes={e.changes} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {list.data.total === 0 ? <p class="empty">No events match.</p> : null}
          <Pager path="/audit" query={query} {...list.data} />
        </>
      ) : null}
    </Page>
  );
}

function Changes({ changes }: { changes: AuditEvent["changes"] }) {
  const entries = Object.entries(changes);
  if (entries.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="changes">
      {entries.map(([field, c]) => (
        <li key={field}>
          <code>{field}</code>
          {"from" in c || "to" in c ? (
            <>
              : <code class="small">{JSON.stringify(c.from ?? null)}</code> →{" "}
              <code class="small">{JSON.stringify(c.to ?? null)}</code>
            </>
          ) : (
            <span class="muted"> (secret: changed, value not recorded)</span>
          )}
        </li>
      ))}
    </ul>
  );
}

/** GET /v1/audit/verify on request: it walks the whole chain. */
function Verify() {
  const { api } = useSession();
  const [result, setResult] = useState<AuditVerify>();
  const [error, setError] = useState<string>();
  const run = async () => {
    setError(undefined);
    setResult(undefined);
    try {
      setResult(await unwrap(api.GET("/v1/audit/verify")));
    } catch (e) {
      setError(messageOf(e));
    }
  };
  return (
    <span class="audit-verify">
      <button type="button" class="secondary" onClick={run}>
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
