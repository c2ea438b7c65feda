import { useEffect, useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { href, navigate, useRoute } from "../router.ts";
import type { PolicyBody, PolicyDecision, PolicyDocument } from "../types.ts";
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
  toRfc3339,
  useLoad,
  useSession,
} from "../ui.tsx";
import { useAgentNames } from "./invocations.tsx";

const EXAMPLE = { default: "allow", on_error: "deny", rules: [] };

/** Whether the tenant has a document (none yet, or deleted: no default is stored then). */
const hasDocument = (doc: PolicyDocument) => doc.default !== undefined;

/** The editable part of the stored document (version and updated_at are the server's). */
function editable(doc: PolicyDocument): string {
  if (!hasDocument(doc)) return JSON.stringify(EXAMPLE, null, 2);
  return JSON.stringify({ default: doc.default, on_error: doc.on_error, rules: doc.rules }, null, 2);
}

export function PolicyScreen() {
  const { caps } = useSession();
  if (!caps.surfaces.policy) return <NotEnabled what="Policy" />;
  return (
    <Page title="Policy">
      <PolicyEditor />
      <Decisions />
    </Page>
  );
}

function PolicyEditor() {
  const { api } = useSession();
  const doc = useLoad(() => unwrap(api.GET("/v1/policy")), "policy");
  const [text, setText] = useState("");
  const [error, setError] = useState<string>();
  const [where, setWhere] = useState<WhenError | null>(null);
  const [saved, setSaved] = useState<string>();
  const [confirmDelete, setConfirmDelete] = useState(false);
  useEffect(() => {
    if (doc.data) setText(editable(doc.data));
  }, [doc.data]);

  return (
    <form
      class="form"
      aria-label="Policy document"
      onSubmit={async (e) => {
        e.preventDefault();
        setSaved(undefined);
        setWhere(null);
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch (err) {
          return setError(`Not valid JSON: ${messageOf(err)}`);
        }
        setError(undefined);
        try {
          // The document as typed: the API validates it and its message is shown inline.
          const r = await unwrap(api.PUT("/v1/policy", { body: body as PolicyBody }));
          setSaved(`Saved: version ${r.version}.`);
          doc.reload();
        } catch (err) {
          setError(messageOf(err));
          setWhere(whenErrorOf(messageOf(err), body));
        }
      }}
    >
      <h2>Document</h2>
      <ErrorBox message={doc.error} />
      <p class="muted">
        {doc.data
          ? hasDocument(doc.data)
            ? `Version ${doc.data.version}, updated ${fmtTime(doc.data.updated_at)}.`
            : `No policy: calls are not evaluated. Saving this creates version ${doc.data.version + 1}.`
          : "Loading…"}{" "}
        Rules:{" "}
        <code>
          {
            '{"action": "allow|warn|deny|require_approval", "match": {"agents", "tools", "methods", "protocols", "max_body_bytes"}, "when": "<CEL>"}'
          }
        </code>
        {" or "}
        <code>{'{"classifier": {"url", "timeout_ms"}, "match": {…}}'}</code>; first match wins.
      </p>
      <label for="policy-json">Policy JSON</label>
      <textarea
        id="policy-json"
        rows={14}
        spellcheck={false}
        class="code"
        value={text}
        aria-invalid={error ? "true" : "false"}
        aria-describedby={error ? "policy-error" : undefined}
        onInput={(e) => setText(e.currentTarget.value)}
      />
      {error ? (
        <p class="error" role="alert" id="policy-error">
          {error}
        </p>
      ) : null}
      {where ? <WhenLocation where={where} /> : null}
      {saved ? (
        <p class="ok" role="status">
          {saved}
        </p>
      ) : null}
      <div class="actions">
        <button type="submit" disabled={!doc.data}>
          Save policy
        </button>
        {doc.data && hasDocument(doc.data) ? (
          confirmDelete ? (
            <>
              <button
                type="button"
                class="danger"
                onClick={async () => {
                  setSaved(undefined);
                  try {
                    await unwrap(api.DELETE("/v1/policy"));
                    setConfirmDelete(false);
                    setSaved("Deleted: calls are no longer evaluated.");
                    doc.reload();
                  } catch (err) {
                    setError(messageOf(err));
                  }
                }}
              >
                Confirm delete
              </button>
              <button type="button" class="secondary" onClick={() => setConfirmDelete(false)}>
                Keep
              </button>
            </>
          ) : (
            <button type="button" class="danger" onClick={() => setConfirmDelete(true)}>
              Delete policy
            </button>
          )
        ) : null}
      </div>
    </form>
  );
}

/** A `when` the API refused: the rule (1-based, as decisions count them) and the character. */
type WhenError = { rule: number; expr: string; at: number | null };

/** `rules.N.when … at character C` (the API's message) located in the document that was sent. */
function whenErrorOf(message: string, body: unknown): WhenError | null {
  const m = /^rules\.(\d+)\.when\b.*?(?: at character (\d+))?$/.exec(message);
  if (!m) return null;
  const rules = (body as { rules?: unknown })?.rules;
  const rule = Array.isArray(rules) ? (rules[Number(m[1])] as { when?: unknown } | undefined) : undefined;
  if (typeof rule?.when !== "string") return null;
  return { rule: Number(m[1]) + 1, expr: rule.when, at: m[2] ? Number(m[2]) - 1 : null };
}

/** The refused expression with the character the API named marked. */
function WhenLocation({ where }: { where: WhenError }) {
  const { expr, at } = where;
  const i = at === null ? -1 : Math.min(at, expr.length);
  return (
    <div class="when-error" data-testid="when-error">
      <p class="muted">
        Rule {where.rule}, <code>when</code>
        {i >= 0 ? `, character ${i + 1}` : ""}:
      </p>
      <pre class="code">
        {i < 0 ? (
          expr
        ) : (
          <>
            {expr.slice(0, i)}
            <mark>{expr.slice(i, i + 1) || " "}</mark>
            {expr.slice(i + 1)}
          </>
        )}
      </pre>
    </div>
  );
}

function Decisions() {
  const { api } = useSession();
  const route = useRoute();
  const names = useAgentNames();
  const query = {
    ...present("action", route.query.get("action") as PolicyDecision["action"] | null),
    ...present("agent_id", route.query.get("agent_id")),
    ...present("since", route.query.get("since")),
    ...present("until", route.query.get("until")),
  };
  const offset = Number(route.query.get("offset") ?? 0) || 0;
  const list = useLoad(
    () => unwrap(api.GET("/v1/policy/decisions", { params: { query: { ...query, offset, limit: 20 } } })),
    route.query.toString(),
  );
  return (
    <section aria-labelledby="decisions-title">
      <h2 id="decisions-title">Decisions</h2>
      <form
        class="filters"
        aria-label="Decision filters"
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          navigate("/policy", { ...v, since: toRfc3339(v.since), until: toRfc3339(v.until) });
        }}
      >
        <label>
          Action
          <Picker name="action" initial={query.action ?? ""} key={query.action}>
            <option value="">any</option>
            <option value="allow">allow</option>
            <option value="warn">warn</option>
            <option value="deny">deny</option>
          </Picker>
        </label>
        <label>
          Agent
          <Picker
            name="agent_id"
            initial={query.agent_id ?? ""}
            key={`${query.agent_id}-${names.data?.size}`}
          >
            <option value="">any</option>
            {[...(names.data ?? new Map<string, string>())].map(([id, name]) => (
              <option key={id} value={id}>
                {name}
              </option>
            ))}
          </Picker>
        </label>
        <label>
          Since
          <input type="datetime-local" name="since" />
        </label>
        <label>
          Until
          <input type="datetime-local" name="until" />
        </label>
        <div class="filter-buttons">
          <button type="submit">Apply</button>
          <a class="button secondary" href={href("/policy")}>
            Clear
          </a>
        </div>
      </form>
      <ErrorBox message={list.error} />
      {list.data ? (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Protocol</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Action</th>
                  <th scope="col">Rule</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((d) => (
                  <tr key={d.id}>
                    <td>{fmtTime(d.created_at)}</td>
                    <td>{names.data?.get(d.agent_id) ?? <code class="small">{d.agent_id}</code>}</td>
                    <td>{d.protocol}</td>
                    <td>{d.mcp_tool ?? "—"}</td>
                    <td>
                      <Status value={d.action} />
                    </td>
                    <td>{d.matched_rule || "default"}</td>
                    <td>{d.reason ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {list.data.total === 0 ? <p class="empty">No decisions match.</p> : null}
          <Pager path="/policy" query={query} {...list.data} />
        </>
      ) : null}
    </section>
  );
}

/** `{[key]: value}` when the URL carries the filter, else nothing (absent, not undefined). */
function present<K extends string, V>(key: K, value: V | null): { [k in K]?: V } {
  return value === null || value === "" ? {} : ({ [key]: value } as { [k in K]: V });
}
