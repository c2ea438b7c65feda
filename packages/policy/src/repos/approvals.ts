import type { ApprovalStatus, Query } from "@gw/db";

/** What an approval is bound to besides its tenant (docs/policy.md "Approvals"). */
export type ApprovalBinding = {
  agentId: string;
  sub: string;
  /** "" for a non-MCP call. */
  mcpMethod: string;
  mcpTool: string;
  callDigest: string;
};

export type Approval = {
  id: string;
  agentId: string;
  sub: string;
  mcpMethod: string;
  mcpTool: string;
  callDigest: string;
  arguments: string | null;
  status: ApprovalStatus;
  reason: string | null;
  requestedAt: Date;
  decidedAt: Date | null;
  decidedBy: string | null;
  expiresAt: Date;
};

export type ApprovalFilter = { status?: ApprovalStatus; agentId?: string; limit: number; offset: number };

// Pending and approved rows past their expiry read as expired; no sweeper is needed for that.
const STATUS = `case when status in ('pending', 'approved') and expires_at <= now() then 'expired' else status end`;
const COLUMNS = `id, agent_id, sub, mcp_method, mcp_tool, call_digest, arguments, ${STATUS} as status, reason, requested_at, decided_at, decided_by, expires_at`;
const BINDING =
  "tenant_id = $1 and agent_id = $2 and sub = $3 and mcp_method = $4 and mcp_tool = $5 and call_digest = $6";

/** Approvals. Every function takes the tenant id: there is no unscoped read. Raw SQL: both stores, hot path. */
export const approvalsRepo = {
  /**
   * Uses an approved, unexpired approval of this binding, at most once across every replica: one
   * conditional UPDATE, so of concurrent identical calls exactly one gets the id; the others get null.
   */
  async use(query: Query, tenantId: string, b: ApprovalBinding): Promise<string | null> {
    const rows = await query(
      `update approvals set status = 'used', used_at = now()
       where id = (select id from approvals where ${BINDING} and status = 'approved' and expires_at > now()
                   order by decided_at limit 1 for update skip locked)
         and status = 'approved'
       returning id`,
      [tenantId, b.agentId, b.sub, b.mcpMethod, b.mcpTool, b.callDigest],
    );
    return rows[0] ? String(rows[0].id) : null;
  },

  /**
   * The pending approval of this binding, created when there is none (the same caller repeating
   * the call while it is pending gets the same id). An expired pending row is closed and replaced.
   */
  async request(
    query: Query,
    tenantId: string,
    b: ApprovalBinding,
    fresh: { id: string; arguments: string | null; pendingSeconds: number },
  ): Promise<string> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const rows = await query(
        `insert into approvals (id, tenant_id, agent_id, sub, mcp_method, mcp_tool, call_digest, arguments, status, expires_at)
         values ($7, $1, $2, $3, $4, $5, $6, $8, 'pending', now() + make_interval(secs => $9))
         on conflict (tenant_id, agent_id, sub, mcp_method, mcp_tool, call_digest) where status = 'pending'
         do update set status = approvals.status
         returning id, expires_at <= now() as expired`,
        [
          tenantId,
          b.agentId,
          b.sub,
          b.mcpMethod,
          b.mcpTool,
          b.callDigest,
          fresh.id,
          fresh.arguments,
          fresh.pendingSeconds,
        ],
      );
      const row = rows[0];
      if (!row) break;
      if (!row.expired) return String(row.id);
      await query(
        `update approvals set status = 'expired' where tenant_id = $1 and id = $2 and status = 'pending'`,
        [tenantId, row.id],
      );
    }
    throw new Error("approval request returned no row");
  },

  async get(query: Query, tenantId: string, id: string): Promise<Approval | undefined> {
    const rows = await query(`select ${COLUMNS} from approvals where tenant_id = $1 and id = $2`, [
      tenantId,
      id,
    ]);
    return rows[0] ? approvalOf(rows[0]) : undefined;
  },

  async list(
    query: Query,
    tenantId: string,
    f: ApprovalFilter,
  ): Promise<{ rows: Approval[]; total: number }> {
    const params: unknown[] = [tenantId];
    let where = "tenant_id = $1";
    if (f.status !== undefined) {
      params.push(f.status);
      where += ` and ${STATUS} = $${params.length}`;
    }
    if (f.agentId !== undefined) {
      params.push(f.agentId);
      where += ` and agent_id = $${params.length}`;
    }
    const [rows, totals] = await Promise.all([
      query(
        `select ${COLUMNS} from approvals where ${where} order by requested_at desc, id desc limit $${params.length + 1} offset $${params.length + 2}`,
        [...params, f.limit, f.offset],
      ),
      query(`select count(*)::int as n from approvals where ${where}`, params),
    ]);
    return { rows: rows.map(approvalOf), total: Number(totals[0]?.n ?? 0) };
  },

  /**
   * Approves or denies a pending, unexpired approval; an approved one may then be used within
   * `usableSeconds`. Undefined when it is not in the tenant; null when it is not pending.
   */
  async decide(
    query: Query,
    tenantId: string,
    id: string,
    d: { status: "approved" | "denied"; reason: string | null; by: string; usableSeconds: number },
  ): Promise<Approval | null | undefined> {
    const rows = await query(
      `update approvals set status = $3, reason = $4, decided_by = $5, decided_at = now(),
         expires_at = case when $3 = 'approved' then now() + make_interval(secs => $6) else expires_at end
       where tenant_id = $1 and id = $2 and status = 'pending' and expires_at > now()
       returning ${COLUMNS}`,
      [tenantId, id, d.status, d.reason, d.by, d.usableSeconds],
    );
    if (rows[0]) return approvalOf(rows[0]);
    return (await approvalsRepo.get(query, tenantId, id)) ? null : undefined;
  },
};

const date = (x: unknown) => (x instanceof Date ? x : new Date(String(x)));
const dateOrNull = (x: unknown) => (x === null || x === undefined ? null : date(x));
const strOrNull = (x: unknown) => (x === null || x === undefined ? null : String(x));

function approvalOf(r: Record<string, unknown>): Approval {
  return {
    id: String(r.id),
    agentId: String(r.agent_id),
    sub: String(r.sub),
    mcpMethod: String(r.mcp_method),
    mcpTool: String(r.mcp_tool),
    callDigest: String(r.call_digest),
    arguments: strOrNull(r.arguments),
    status: String(r.status) as ApprovalStatus,
    reason: strOrNull(r.reason),
    requestedAt: date(r.requested_at),
    decidedAt: dateOrNull(r.decided_at),
    decidedBy: strOrNull(r.decided_by),
    expiresAt: date(r.expires_at),
  };
}
