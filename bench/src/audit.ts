import { randomUUID } from "node:crypto";
import { appendAudit, queryOf } from "@gw/audit";
import { openStore } from "@gw/db";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";

/**
 * The audit chain's cost per control-plane write (docs/audit.md), in process against the
 * gateway's Postgres: the transaction of a `PUT /v1/policy` (the tenant's policy row upserted
 * with the next version) with `appendAudit` in it, against the same transaction without it. One
 * writer, `writes` transactions per round and variant, variants alternating; medians over rounds
 * of the mean time per write. The bench tenant's rows are removed afterwards.
 */
export async function auditRows(databaseUrl: string, p: { rounds: number; writes: number }): Promise<Row[]> {
  const store = await openStore(databaseUrl, { maxConnections: 1 });
  const tenantId = `bench-audit-${randomUUID()}`;
  let version = 0;
  const write = (audited: boolean) =>
    store.db.transaction(async (tx) => {
      version++;
      const document = { default: "allow", rules: [] };
      await queryOf(tx)(
        `insert into policies (tenant_id, version, document) values ($1, $2, $3::jsonb)
         on conflict (tenant_id) do update set version = excluded.version, document = excluded.document,
         updated_at = now()`,
        [tenantId, version, JSON.stringify(document)],
      );
      if (audited)
        await appendAudit({
          tx,
          tenantId,
          actor: "bench",
          action: "policy.replace",
          resourceId: tenantId,
          requestId: randomUUID(),
          changes: { version: { from: version - 1, to: version } },
        });
    });
  const perWrite = async (audited: boolean) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < p.writes; i++) await write(audited);
    return Number(process.hrtime.bigint() - t0) / 1e6 / p.writes;
  };
  try {
    await perWrite(false); // warm-up: connection, plans, JIT
    await perWrite(true);
    const got = { plain: [] as number[], audited: [] as number[] };
    for (let r = 0; r < p.rounds; r++) {
      for (const audited of r % 2 === 0 ? [false, true] : [true, false])
        got[audited ? "audited" : "plain"].push(await perWrite(audited));
    }
    const plain = median(got.plain);
    const audited = median(got.audited);
    return [
      {
        scenario: "audit",
        metric: `control-plane write, one writer (bare: without its event; +${(audited - plain).toFixed(2)} ms)`,
        unit: "ms",
        direct: null,
        bare: plain,
        gateway: audited,
      },
    ];
  } finally {
    await store.query("delete from audit_events where tenant_id = $1", [tenantId]);
    await store.query("delete from policies where tenant_id = $1", [tenantId]);
    await store.close();
  }
}
