import { createHash } from "node:crypto";
import { canonicalJson, newId } from "@gw/core";
import type { AuditChange, AuditEventRow, Db } from "@gw/db";
import * as v from "valibot";
import { type AuditFilter, auditRepo } from "./repos/audit.ts";

/** Every action an event can carry (docs/audit.md). */
export const AUDIT_ACTIONS = [
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
  "connection.create",
  "connection.delete",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export type AuditChanges = Record<string, AuditChange>;

/** Events read per statement by the export and the verifier. */
export const AUDIT_PAGE = 500;

/**
 * The hashed form of an event: every field but the digests, timestamps in RFC 3339 UTC. The same
 * object the API returns, so a verifier outside the gateway recomputes the digest from the export.
 */
function hashedEvent(e: Omit<AuditEventRow, "seq" | "prevDigest" | "digest">) {
  return {
    id: e.id,
    tenant_id: e.tenantId,
    actor: e.actor,
    action: e.action,
    resource_id: e.resourceId,
    request_id: e.requestId,
    created_at: e.createdAt.toISOString(),
    changes: e.changes,
  };
}

/** `sha256:<hex>` of the previous digest ("" for the first event) followed by the canonical event. */
export function auditDigest(prevDigest: string | null, e: AuditEventRow): string {
  const h = createHash("sha256");
  h.update(prevDigest ?? "");
  h.update(canonicalJson(hashedEvent(e)));
  return `sha256:${h.digest("hex")}`;
}

const Change = v.object({ from: v.optional(v.unknown()), to: v.optional(v.unknown()) });

/**
 * An audit event as callers see it (docs/audit.md). The OpenAPI document is generated from this
 * schema and `auditEventJson` is typed by it. `digest` is recomputable from the other fields
 * (RFC 8785 canonical JSON of every field but the two digests) and `prev_digest`.
 */
export const AuditEventResource = v.object({
  id: v.pipe(v.string(), v.regex(/^aud_[0-9a-f-]{36}$/)),
  tenant_id: v.string(),
  actor: v.string(),
  action: v.picklist(AUDIT_ACTIONS),
  resource_id: v.string(),
  request_id: v.string(),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  changes: v.record(v.string(), Change),
  digest: v.string(),
  prev_digest: v.nullable(v.string()),
});
export type AuditEventJson = v.InferOutput<typeof AuditEventResource>;

export const AuditVerifyResource = v.object({
  events: v.number(),
  valid: v.boolean(),
  first_bad_id: v.optional(v.string()),
});

export function auditEventJson(e: AuditEventRow): AuditEventJson {
  return { ...hashedEvent(e), action: e.action as AuditAction, digest: e.digest, prev_digest: e.prevDigest };
}

/**
 * Appends one event to the tenant's chain inside `tx`, the transaction of the write it records:
 * the write and its event commit together or not at all (a write that cannot be audited fails).
 * Concurrent writers of one tenant wait for each other here, so the chain stays linear. One round
 * trip (`auditRepo.append`): the digest is computed in SQL from the head it reads.
 * `changes` must already hold secret fields by name only (`secretChange`).
 */
export async function appendAudit(args: {
  tx: Db;
  tenantId: string;
  actor: string;
  action: AuditAction;
  resourceId: string;
  requestId: string;
  changes: AuditChanges;
}): Promise<AuditEventRow> {
  const event = {
    id: newId("aud"),
    tenantId: args.tenantId,
    actor: args.actor,
    action: args.action,
    resourceId: args.resourceId,
    requestId: args.requestId,
    createdAt: new Date(),
    changes: args.changes,
  };
  const chained = await auditRepo.append(args.tx, event, canonicalJson(hashedEvent(event)));
  return { ...event, ...chained };
}

/** A secret field's change: its name is recorded, its value never. */
export const SECRET_CHANGE: AuditChange = {};

/**
 * `{field: {from, to}}` for each field whose JSON differs between `before` and `after` (either may
 * be null: created, deleted). Fields named in `secret` appear by name only.
 */
export function diffChanges(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  secret: readonly string[] = [],
): AuditChanges {
  const out: AuditChanges = {};
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const k of [...keys].sort()) {
    const from = before?.[k];
    const to = after?.[k];
    if (canonicalJson(from ?? null) === canonicalJson(to ?? null)) continue;
    if (secret.includes(k)) {
      out[k] = SECRET_CHANGE;
      continue;
    }
    out[k] = { from: from ?? null, to: to ?? null };
  }
  return out;
}

export async function listAudit(db: Db, tenantId: string, filter: AuditFilter) {
  return auditRepo.list(db, tenantId, filter);
}

/** The tenant's events oldest first within the range, one keyset page at a time. */
export async function* exportAudit(
  db: Db,
  tenantId: string,
  range: { since?: Date | undefined; until?: Date | undefined },
  pageSize = AUDIT_PAGE,
): AsyncGenerator<AuditEventRow> {
  let after = 0;
  for (;;) {
    const page = await auditRepo.pageAfter(db, tenantId, after, pageSize, range);
    for (const row of page) yield row;
    if (page.length < pageSize) return;
    after = (page[page.length - 1] as AuditEventRow).seq;
  }
}

/**
 * Walks the tenant's whole chain: each event's digest must be recomputable from its fields and
 * the previous digest, and positions must follow without a gap. The first event that fails is
 * named; a removed event fails the one after it.
 */
export async function verifyAudit(
  db: Db,
  tenantId: string,
): Promise<{ events: number; valid: boolean; first_bad_id?: string }> {
  let events = 0;
  let prev: string | null = null;
  let seq = 0;
  let firstBad: string | undefined;
  for await (const row of exportAudit(db, tenantId, {})) {
    events++;
    const ok = row.seq === seq + 1 && row.prevDigest === prev && auditDigest(prev, row) === row.digest;
    if (!ok && firstBad === undefined) firstBad = row.id;
    prev = row.digest;
    seq = row.seq;
  }
  return firstBad === undefined ? { events, valid: true } : { events, valid: false, first_bad_id: firstBad };
}
