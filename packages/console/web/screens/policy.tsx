import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { href } from "../router.ts";
import type { PolicyBody, PolicyDocument } from "../types.ts";
import {
  ConfirmDelete,
  Done,
  ErrorBox,
  fmtTime,
  type Loaded,
  messageOf,
  Page,
  useLoad,
  useSession,
} from "../ui.tsx";
import { Decisions } from "./policy-decisions.tsx";
import { Quotas } from "./policy-quotas.tsx";

const EXAMPLE = { default: "allow", on_error: "deny", rules: [] };

/** Whether the tenant has a document (none yet, or deleted: no default is stored then). */
const hasDocument = (doc: PolicyDocument) => doc.default !== undefined;

/** The editable part of the stored document (version and updated_at are the server's). */
function editable(doc: PolicyDocument): string {
  if (!hasDocument(doc)) return JSON.stringify(EXAMPLE, null, 2);
  const answerRules = doc.answer_rules?.length ? { answer_rules: doc.answer_rules } : {};
  return JSON.stringify(
    { default: doc.default, on_error: doc.on_error, rules: doc.rules, ...answerRules },
    null,
    2,
  );
}

export function PolicyScreen() {
  const { api } = useSession();
  // One load for the editor and the quotas: a save reloads both.
  const doc = useLoad(() => unwrap(api.GET("/v1/policy")), "policy");
  return (
    <Page title="Policy">
      <PolicyEditor doc={doc} />
      <Quotas doc={doc.data} />
      <Decisions />
    </Page>
  );
}

function PolicyEditor({ doc }: { doc: Loaded<PolicyDocument> }) {
  const { api } = useSession();
  const [text, setText] = useState("");
  const [error, setError] = useState<string>();
  const [where, setWhere] = useState<WhenError | null>(null);
  const [saved, setSaved] = useState<string>();
  const editor = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (doc.data) setText(editable(doc.data));
  }, [doc.data]);
  useGrowWithText(editor, text);

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
            '{"action": "allow|warn|deny|require_approval", "match": {"agents", "tools", "methods", "protocols", "tool_status", "max_body_bytes"}, "when": "<CEL>"}'
          }
        </code>
        {", "}
        <code>
          {
            '{"action": "limit", "limit": {"requests", "per": "second|minute|hour|day", "key": "<CEL>"}, "match": {…}}'
          }
        </code>
        {" or "}
        <code>{'{"classifier": {"url", "timeout_ms"}, "match": {…}}'}</code>; first match wins among all but
        the limit rules, which count the calls let through. Answer rules (<code>answer_rules</code>) judge
        what an agent answers before the caller sees it: an MCP server's answers to tools/call, resources/read
        and prompts/get, and an A2A agent's to SendMessage, SendStreamingMessage, GetTask and SubscribeToTask
        (v0.3 message/send, message/stream, tasks/get, tasks/resubscribe), a stream event by event:{" "}
        <code>
          {
            '{"detect": {"secrets": true, "pii": ["email", "phone", "credit_card", "iban", "us_ssn", "ip_address"], "patterns": ["<RE2>"]}, "action": "redact|block|warn", "match": {…}, "when": "<CEL>"}'
          }
        </code>
        , optionally with <code>{'"classifier": {"url", "timeout_ms", "include_content": true}'}</code>; the
        first rule with a finding acts.
      </p>
      <UnknownToolsNote rules={unknownToolRules(text)} />
      <label for="policy-json">Policy JSON</label>
      <textarea
        id="policy-json"
        ref={editor}
        rows={MIN_ROWS}
        spellcheck={false}
        class="code grow"
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
      <Done message={saved} />
      <div class="actions">
        <button type="submit" disabled={!doc.data}>
          Save policy
        </button>
        {doc.data && hasDocument(doc.data) ? (
          <ConfirmDelete
            label="Delete policy"
            onConfirm={async () => {
              setSaved(undefined);
              try {
                await unwrap(api.DELETE("/v1/policy"));
                setSaved("Deleted: calls are no longer evaluated.");
                doc.reload();
                return true;
              } catch (err) {
                setError(messageOf(err));
                return false;
              }
            }}
          />
        ) : null}
      </div>
    </form>
  );
}

/** The editor's least height in lines; it grows with the document up to its CSS max-height. */
const MIN_ROWS = 8;

/**
 * Sizes a textarea to its text, so a policy reads without scrolling: at least its `rows`, at most
 * its CSS `max-height` (70 % of the window, then it scrolls inside). Measured, not counted in
 * lines, because long lines wrap. The height is set through the CSSOM, which the CSP allows.
 */
function useGrowWithText(ref: { current: HTMLTextAreaElement | null }, text: string) {
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = "auto";
    const border = el.offsetHeight - el.clientHeight;
    el.style.height = `${el.scrollHeight + border}px`;
  }, [text]);
}

/**
 * The 1-based positions of the rules in the edited text that match `tool_status` "unknown" (none
 * while the text is not a document).
 */
function unknownToolRules(text: string): number[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return [];
  }
  const rules = (doc as { rules?: unknown })?.rules;
  if (!Array.isArray(rules)) return [];
  const found: number[] = [];
  rules.forEach((r, i) => {
    const statuses = (r as { match?: { tool_status?: unknown } } | null)?.match?.tool_status;
    if (Array.isArray(statuses) && statuses.includes("unknown")) found.push(i + 1);
  });
  return found;
}

/**
 * Next to a rule on `tool_status: ["unknown"]`: what it does to a fresh MCP agent and the fix
 * (docs/tools.md). Refusing is intended; not saying so leaves the operator puzzled.
 */
function UnknownToolsNote({ rules }: { rules: number[] }) {
  if (rules.length === 0) return null;
  return (
    <div class="notice" data-testid="unknown-tools-note">
      <p>
        <strong>
          {rules.length === 1 ? `Rule ${rules[0]} matches` : `Rules ${rules.join(", ")} match`} tools the
          gateway has never seen (<code>unknown</code>).
        </strong>{" "}
        The gateway learns an MCP agent's tools from a <code>tools/list</code> that passes through it, or from
        a refresh. Until then every tool of a fresh agent is <code>unknown</code>, so this rule decides its
        first <code>tools/call</code> (a <code>deny</code> refuses it), even for a tool the server has. To fix
        it, list the tools through the gateway (any MCP client does when it connects), or open the agent under{" "}
        <a href={href("/agents")}>Agents</a> and choose <em>Refresh tools</em> (
        <code>POST /v1/agents/{"{id}"}/tools/refresh</code>).
      </p>
    </div>
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
