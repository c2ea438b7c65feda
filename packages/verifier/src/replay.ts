import type { Query } from "@gw/db";

/** The reservation kind under which a verified request digest is made one-shot per tenant. */
export const VERIFIED_DIGEST_KIND = "verified_digest";

export type Reservation = { kind: typeof VERIFIED_DIGEST_KIND; scope: string; key: string };

/** The reservation that makes `digest` one-shot in `tenantId` (written with the invocation row). */
export function digestReservation(tenantId: string, digest: string): Reservation {
  return { kind: VERIFIED_DIGEST_KIND, scope: tenantId, key: digest };
}

/**
 * Replay preflight: whether `digest` was already reserved in the tenant. A cheap read that answers
 * a replay with 409 before policy, x402 or anything else runs; the unique key written in the
 * invocation's transaction stays the guard against concurrent replays that all pass this read.
 */
export async function isDigestReserved(query: Query, tenantId: string, digest: string): Promise<boolean> {
  const rows = await query("select 1 from reservations where kind = $1 and scope = $2 and key = $3", [
    VERIFIED_DIGEST_KIND,
    tenantId,
    digest,
  ]);
  return rows.length > 0;
}
