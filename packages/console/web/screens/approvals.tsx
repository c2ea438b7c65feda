import { useState } from "preact/hooks";
import { AgentName, useAgentNames } from "../agent-names.tsx";
import { unwrap } from "../api.ts";
import { FilterBar, FilterPicker, PagedTable, usePage, WithId } from "../list/index.ts";
import { useRoute } from "../router.ts";
import type { Approval } from "../types.ts";
import { ErrorBox, fmtTime, Page, Status, useAction, useSession } from "../ui.tsx";

const DECIDE_SCOPE = "approvals:decide";
const STATUSES = ["pending", "approved", "denied", "used", "expired"] as const;

/**
 * Calls held by require_approval rules (docs/policy.md "Approvals"): what each caller sent, and
 * approve / deny with a reason for holders of approvals:decide.
 */
export function ApprovalsScreen() {
  const { api, me } = useSession();
  const route = useRoute();
  const names = useAgentNames();
  const status = (route.query.get("status") ?? "pending") as Approval["status"];
  const [tick, setTick] = useState(0);
  const list = usePage(
    (page) => unwrap(api.GET("/v1/approvals", { params: { query: { status, ...page } } })),
    `${route.query.toString()}-${tick}`,
  );
  const canDecide = me.scopes.includes(DECIDE_SCOPE);
  return (
    <Page title="Approvals">
      <FilterBar label="Approval filters" path="/approvals" reset="Pending">
        <FilterPicker label="Status" name="status" value={status} choices={STATUSES} />
      </FilterBar>
      {canDecide ? null : (
        <p class="muted">
          Deciding needs scope <code>{DECIDE_SCOPE}</code> in your token.
        </p>
      )}
      <PagedTable
        list={list}
        rowKey={(a) => a.id}
        rowProps={(a) => ({ "data-approval": a.id })}
        columns={[
          {
            head: "Requested",
            cell: (a) => <WithId id={a.id}>{fmtTime(a.requested_at)}</WithId>,
          },
          { head: "Agent", cell: (a) => <AgentName id={a.agent_id} names={names.data} /> },
          { head: "Caller", cell: (a) => a.sub },
          { head: "Tool", cell: (a) => a.mcp_tool ?? a.mcp_method ?? "— (HTTP body)" },
          {
            head: "Arguments",
            cell: (a) =>
              a.arguments === null ? (
                <span class="muted">not shown (over 64 KiB or not MCP)</span>
              ) : (
                <pre class="arguments code">{JSON.stringify(a.arguments, null, 2)}</pre>
              ),
          },
          {
            head: "Status",
            cell: (a) => (
              <>
                <Status value={a.status} />
                <br />
                <span class="muted small">until {fmtTime(a.expires_at)}</span>
              </>
            ),
          },
          {
            head: "Decision",
            cell: (a) =>
              a.status === "pending" && canDecide ? (
                <Decide approval={a} onDone={() => setTick((t) => t + 1)} />
              ) : (
                <span>
                  {a.decided_by ? `${a.decided_by}: ` : ""}
                  {a.reason ?? "—"}
                </span>
              ),
          },
        ]}
        empty={`No ${status} approvals.`}
        path="/approvals"
        query={{ status }}
      />
    </Page>
  );
}

function Decide({ approval, onDone }: { approval: Approval; onDone: () => void }) {
  const { api } = useSession();
  const [reason, setReason] = useState("");
  const { error, run } = useAction();
  const decide = (verb: "approve" | "deny") => {
    const path = verb === "approve" ? "/v1/approvals/{id}/approve" : "/v1/approvals/{id}/deny";
    return run(async () => {
      await unwrap(api.POST(path, { params: { path: { id: approval.id } }, body: reason ? { reason } : {} }));
      onDone();
    });
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
      <ErrorBox message={error} />
    </div>
  );
}
