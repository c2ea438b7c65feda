import { AUDIT_ACTIONS, auditEventJson, exportAudit, listAudit, verifyAudit } from "@gw/audit";
import { DomainError, LIMITS } from "@gw/core";
import {
  type AppEnv,
  enumParam,
  PAGE_QUERY,
  pageOf,
  RANGE_QUERY,
  rangeOf,
  takesQuery,
  textParam,
} from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Context, Hono } from "hono";

export type AuditRouteDeps = Pick<Runtime, "store">;

/** The scope that reads the audit log (docs/audit.md). */
export const AUDIT_READ_SCOPE = "audit:read";

function requireAuditScope(c: Context<AppEnv>): void {
  if (!c.var.principal.scopes.includes(AUDIT_READ_SCOPE)) {
    throw new DomainError("forbidden", `scope ${AUDIT_READ_SCOPE} required`);
  }
}

/**
 * GET /v1/audit (newest first, filtered, paged), GET /v1/audit/export (NDJSON, oldest first, read
 * in keyset pages while it is sent) and GET /v1/audit/verify (the tenant's chain walked whole).
 * Each reads the caller's tenant only.
 */
export function registerAudit(app: Hono<AppEnv>, deps: AuditRouteDeps) {
  app.get(
    "/audit",
    takesQuery(...PAGE_QUERY, ...RANGE_QUERY, "action", "actor", "resource_id"),
    async (c) => {
      requireAuditScope(c);
      const q = c.req.query();
      const page = pageOf(q, LIMITS.auditMaxLimit);
      const { rows, total } = await listAudit(deps.store.db, c.var.principal.tenantId, {
        ...page,
        ...rangeOf(q),
        action: enumParam(q.action, "action", AUDIT_ACTIONS),
        actor: textParam(q.actor, "actor"),
        resourceId: textParam(q.resource_id, "resource_id"),
      });
      return c.json({ data: rows.map(auditEventJson), limit: page.limit, offset: page.offset, total });
    },
  );

  app.get("/audit/export", takesQuery(...RANGE_QUERY), async (c) => {
    requireAuditScope(c);
    const range = rangeOf(c.req.query());
    const events = exportAudit(deps.store.db, c.var.principal.tenantId, range);
    const encoder = new TextEncoder();
    const log = c.var.log;
    // Pulled by the socket: the next page is read only when the previous one has been sent.
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const next = await events.next();
          if (next.done) controller.close();
          else controller.enqueue(encoder.encode(`${JSON.stringify(auditEventJson(next.value))}\n`));
        } catch (e) {
          // The status has left: a store failure mid-stream ends the stream short (no last newline).
          log.warn({ err: e }, "audit export ended early");
          controller.error(e);
        }
      },
      async cancel() {
        await events.return(undefined);
      },
    });
    return new Response(body, {
      headers: { "content-type": "application/x-ndjson", "cache-control": "no-store" },
    });
  });

  app.get("/audit/verify", async (c) => {
    requireAuditScope(c);
    return c.json(await verifyAudit(deps.store.db, c.var.principal.tenantId));
  });
}
