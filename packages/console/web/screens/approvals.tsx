import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { FilterButtons } from "../filters.tsx";
import { navigate, useRoute } from "../router.ts";
import type { Approval } from "../types.ts";
import {
  ErrorBox,
  fmtTime,
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

const DECIDE_SCOPE = "approvals:decide";
const STATUSES = ["pending", "approved", "denied", "used", "expired"] as const;

/**
 * Calls held by require_approval rules (docs/policy.md "Approvals"): what each caller sent, and
 * approve / deny with a reason for holders of approvals:decide.
 */
export function ApprovalsScreen() {
  const { api, caps, me } = useSession();
  const route = useRoute();
  const names = useAgentNames();
  const status = (route.query.get("status") ?? "pending") as Approval["status"];
  const offset = Number(route.query.get("offset") ?? 0) || 0;
  const [tick, setTick] = useState(0);
  const list = useLoad(
    () => unwrap(api.GET("/v1/approvals", { params: { query: { status, offset, limit: 20 } } })),
    `${route.query.toString()}-${tick}`,
  );
  if (caps.surfaces.approvals === false) return <NotEnabled what="Approvals" />;
  const canDecide = me.scopes.includes(DECIDE_SCOPE);
  return (
    <Page title="Approvals">
      <form
        class="filters"
        aria-label="Approval filters"
        onSubmit={(e) => {
          e.preventDefault();
          navigate("/approvals", { status: new FormData(e.currentTarget).get("status") as string });
        }}
      >
        <label>
          Status
          <Picker name="status" initial={status} key={status}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </Picker>
        </label>
        <FilterButtons path="/approvals" reset="Pending" />
      </form>
      {canDecide ? null : (
        <p class="muted">
          Deciding needs scope <code>{DECIDE_SCOPE}</code> in your token.
        </p>
      )}
      <ErrorBox message={list.error} />
      {list.data ? (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Requested</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Caller</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Arguments</th>
                  <th scope="col">Status</th>
                  <th scope="col">Decision</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((a) => (
                  <tr key={a.id} data-approval={a.id}>
                    <td>
                      {fmtTime(a.requested_at)}
                      <br />
                      <code class="small">{a.id}</code>
                    </td>
                    <td>{names.data?.get(a.agent_id) ?? <code class="small">{a.agent_id}</code>}</td>
                    <td>{a.sub}</td>
                    <td>{a.mcp_tool ?? a.mcp_method ?? "— (HTTP body)"}</td>
                    <td>
                      {a.arguments === null ? (
                        <span class="muted">not shown (over 64 KiB or not MCP)</span>
                      ) : (
                        <pre class="arguments code">{JSON.stringify(a.arguments, null, 2)}</pre>
                      )}
                    </td>
                    <td>
                      <Status value={a.status} />
                      <br />
                      <span class="muted small">until {fmtTime(a.expires_at)}</span>
                    </td>
                    <td>
                      {a.status === "pending" && canDecide ? (
                        <Decide approval={a} onDone={() => setTick((t) => t + 1)} />
                      ) : (
                        <span>
                          {a.decided_by ? `${a.decided_by}: ` : ""}
                          {a.reason ?? "—"}
                        </span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {list.data.total === 0 ? <p class="empty">No {status} approvals.</p> : null}
          <Pager path="/approvals" query={{ status }} {...list.data} />
        </>
      ) : null}
    </Page>
  );
}

function Decide({ approval, onDone }: { approval: Approval; onDone: () => void }) {
  const { api } = useSession();
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string>();
  const decide = async (verb: "approve" | "deny") => {
    setError(undefined);
    const path = verb === "approve" ? "/v1/approvals/{id}/approve" : "/v1/approvals/{id}/deny";
    try {
      await unwrap(api.POST(path, { params: { path: { id: approval.id } }, body: reason ? { reason } : {} }));
      onDone();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <div class="decide">
      <label>
        Reason
        <input
          type="text"
          name="reason"
          maxLength={1024}
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </label>
      <div class="actions">
        <button type="button" onClick={() => decide("approve")}>
          Approve
        </button>
        <button type="button" class="secondary" onClick={() => decide("deny")}>
          Deny
        </button>
      </div>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
