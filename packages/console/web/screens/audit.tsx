import { AUDIT_ACTIONS } from "@gw/client";
import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { FilterButtons, TimeRange } from "../filters.tsx";
import { jsonDiff } from "../json-diff.ts";
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
            {AUDIT_ACTIONS.map((a) => (
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
