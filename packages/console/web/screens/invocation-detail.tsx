import { RECORDED_FIELDS } from "@gw/client";
import type { ComponentChildren } from "preact";
import { unwrap } from "../api.ts";
import { href } from "../router.ts";
import type { InvocationDetail as Detail, Invocation } from "../types.ts";
import {
  decodeBody,
  ErrorBox,
  Fields,
  fmtBytes,
  fmtMs,
  fmtTime,
  Page,
  Status,
  useLoad,
  useSession,
} from "../ui.tsx";
import { TaskInvocations } from "./a2a-task.tsx";

export function InvocationDetail({ id }: { id: string }) {
  const { api, me, caps } = useSession();
  const inv = useLoad(() => unwrap(api.GET("/v1/invocations/{id}", { params: { path: { id } } })), id);
  const d = inv.data;
  return (
    <Page title="Invocation" refresh={inv.reload}>
      <p>
        <a href={href("/invocations")}>← All invocations</a>
      </p>
      <ErrorBox message={inv.error} />
      {d ? (
        <>
          <Summary d={d} />
          <Recorded d={d} />
          {d.settlement ? (
            <>
              <h2>Settlement</h2>
              <Fields
                rows={[
                  ["Status", <Status key="s" value={d.settlement.status} />],
                  ["Transaction", d.settlement.tx_hash ? <code key="t">{d.settlement.tx_hash}</code> : null],
                  ["Settled amount", d.settlement.settled_amount],
                  ["Operator amount", d.settlement.operator_amount],
                  ["Facilitator fee", d.settlement.facilitator_fee],
                  ["Attempts", d.settlement.attempts],
                  ["Reason", d.settlement.reason],
                  ["Settled at", fmtTime(d.settlement.settled_at)],
                ]}
              />
            </>
          ) : null}
          <h2>Bodies</h2>
          <Bodies d={d} canRead={me.can_read_invocation_bodies} />
          {d.mode === "transactional" && caps.surfaces.proxy ? <PollResult inv={d} /> : null}
          {caps.surfaces.receipts ? <ReceiptOf id={d.id} /> : null}
        </>
      ) : null}
    </Page>
  );
}

function Summary({ d }: { d: Detail }) {
  return (
    <Fields
      rows={[
        ["Id", <code key="id">{d.id}</code>],
        ["Agent", <AgentRef key="a" id={d.agent_id} />],
        ["Served by member", d.routed_agent_id ? <AgentRef key="r" id={d.routed_agent_id} /> : null],
        ["Mode", d.mode],
        ["Status", <Status key="s" value={d.status} />],
        ["Error class", d.error_class],
        ["Upstream status", d.upstream_status],
        ["Latency", fmtMs(d.latency_ms)],
        ["Time to first byte", fmtMs(d.ttft_ms)],
        ["Request size", fmtBytes(d.req_size)],
        ["Response size", fmtBytes(d.resp_size)],
        ["Model", d.model],
        [
          "Policy",
          d.policy_action ? `${d.policy_action} (rule ${d.policy_matched_rule || "default"})` : null,
        ],
        [
          // A paid MCP tool call paid inside the call (x402/payment in its _meta) for that tool.
          d.payment_amount && d.mcp_method === "tools/call"
            ? `Payment for ${d.mcp_tool ?? "the tool"}`
            : "Payment",
          d.payment_amount
            ? `${d.payment_amount} ${d.payment_asset ?? ""} on ${d.payment_network ?? ""} from ${d.payment_payer ?? ""}`
            : null,
        ],
        ["Answer", d.answer_action ? `${d.answer_action} (${findingsText(d.answer_findings)})` : null],
        ["Receipt artifact", d.receipt_artifact_id],
        ["Created", fmtTime(d.created_at)],
        ["Completed", fmtTime(d.completed_at)],
      ]}
    />
  );
}

/**
 * More of a protocol's section than its recorded fields: an A2A or MCP call's place in its task
 * (every invocation of the task in order, this one marked; docs/a2a.md, docs/mcp.md).
 */
const MORE: { readonly [P in keyof typeof RECORDED_FIELDS]?: (d: Detail) => ComponentChildren } = {
  a2a: (d) => (d.a2a_task_id ? <TaskInvocations taskId={d.a2a_task_id} current={d.id} /> : null),
  mcp: (d) => (d.mcp_task_id ? <TaskInvocations kind="mcp" taskId={d.mcp_task_id} current={d.id} /> : null),
};

/**
 * What the call's protocol recorded of it (the fields each protocol declares, with their labels):
 * a section per protocol that recorded anything, titled as declared ("MCP call", "A2A task").
 */
function Recorded({ d }: { d: Detail }) {
  return (
    <>
      {Object.entries(RECORDED_FIELDS).map(([protocol, { title, fields }]) => {
        const rows = fields.map((f): [string, ComponentChildren] => {
          const value = d[f.name];
          return [f.label, value ? <code key={f.name}>{value}</code> : null];
        });
        if (rows.every(([, v]) => v === null)) return null;
        return (
          <section key={protocol} data-testid={title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}>
            <h2>{title}</h2>
            <Fields rows={rows} />
            {MORE[protocol as keyof typeof RECORDED_FIELDS]?.(d)}
          </section>
        );
      })}
    </>
  );
}

/**
 * An agent by its name, linked to its page, with its id beside it (to copy, or to tell two agents
 * of one name apart). A deleted agent has no name to show: its id alone.
 */
function AgentRef({ id }: { id: string }) {
  const { api } = useSession();
  const agent = useLoad(() => unwrap(api.GET("/v1/agents/{id}", { params: { path: { id } } })), id);
  const name = agent.data?.name;
  return (
    <span data-testid="agent-ref">
      {name ? (
        <>
          <a href={href(`/agents/${id}`)}>{name}</a> <code class="small">{id}</code>
        </>
      ) : (
        <a href={href(`/agents/${id}`)}>
          <code>{id}</code>
        </a>
      )}
    </span>
  );
}

function Bodies({ d, canRead }: { d: Detail; canRead: boolean }) {
  if (!d.body_captured) return <p class="muted">Body capture was off for this call.</p>;
  if (!canRead) {
    return <p class="muted">Bodies were captured, but this token lacks the invocations:read_body scope.</p>;
  }
  return (
    <div class="bodies">
      <figure>
        <figcaption>Request body</figcaption>
        <pre>{d.req_body ? decodeBody(d.req_body) : "(empty)"}</pre>
      </figure>
      <figure>
        <figcaption>Response body</figcaption>
        <pre>{d.resp_body ? decodeBody(d.resp_body) : "(empty)"}</pre>
      </figure>
    </div>
  );
}

/** The transactional result as the caller polls it: the body only for its caller or read_body. */
function PollResult({ inv }: { inv: Invocation }) {
  const { api } = useSession();
  const poll = useLoad(
    () =>
      unwrap(
        api.GET("/v1/proxy/{id}/invocations/{inv_id}", {
          params: { path: { id: inv.agent_id, inv_id: inv.id } },
        }),
      ),
    `${inv.id}|${inv.status}`,
  );
  const r = poll.data?.response;
  return (
    <section aria-labelledby="poll-title">
      <h2 id="poll-title">Poll result</h2>
      <ErrorBox message={poll.error} />
      {poll.data && !r ? <p class="muted">No upstream answer recorded (status {poll.data.status}).</p> : null}
      {r ? (
        <>
          <Fields
            rows={[
              ["Response status", r.status],
              ["Content type", r.headers["content-type"]],
            ]}
          />
          {r.body_b64 !== undefined ? (
            <pre data-testid="poll-body">{decodeBody(r.body_b64)}</pre>
          ) : (
            <p class="muted">The response body is readable only by the caller who made the call.</p>
          )}
        </>
      ) : null}
    </section>
  );
}

function ReceiptOf({ id }: { id: string }) {
  const { api } = useSession();
  const rc = useLoad(() => unwrap(api.GET("/v1/invocations/{id}/receipt", { params: { path: { id } } })), id);
  return (
    <section aria-labelledby="receipt-title">
      <h2 id="receipt-title">Receipt</h2>
      <ErrorBox message={rc.error} />
      {rc.data ? (
        <Fields
          rows={[
            ["Attested", rc.data.attested ? "yes" : `no${rc.data.reason ? ` (${rc.data.reason})` : ""}`],
            ["Artifact", rc.data.artifact_id],
            ["Actor", rc.data.actor],
            ["Signed at", fmtTime(rc.data.signed_at)],
            [
              "JWS",
              rc.data.jws ? (
                <code key="j" class="wrap">
                  {rc.data.jws}
                </code>
              ) : null,
            ],
          ]}
        />
      ) : null}
    </section>
  );
}

/** An invocation's answer findings as `email ×2, secret ×1` (kinds and counts, never the text). */
export function findingsText(findings: Record<string, number> | null | undefined): string {
  const entries = Object.entries(findings ?? {});
  return entries.length === 0 ? "no findings" : entries.map(([k, n]) => `${k} ×${n}`).join(", ");
}
