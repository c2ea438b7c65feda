import { openStore, type Store } from "@gw/db";

/**
 * The bench's own look at the gateway's Postgres: how many of an agent's invocations are still
 * open, and when the last one completed. Read straight from the store through the open-row index,
 * so that waiting for the worker does not load the Postgres being measured (the control plane's
 * filtered `total` visits every row of the agent: tens of thousands by the end of a run).
 */
export type BenchStore = {
  /** Invocations of the agent still pending or running. */
  open: (tenantId: string, agentId: string) => Promise<number>;
  /** The latest `completed_at` of the agent's invocations created at or after `since`; ms. */
  lastCompletion: (tenantId: string, agentId: string, since: Date) => Promise<number>;
  /**
   * With autovacuum off (some CI images turn it off), dead row versions pile up across steps and
   * the planner has no statistics: vacuum and analyze the invocation tables between steps, as
   * autovacuum would on any production Postgres. Returns whether it did.
   */
  vacuumIfNoAutovacuum: () => Promise<boolean>;
  close: () => Promise<void>;
};

export async function benchStore(url: string): Promise<BenchStore> {
  const store: Store = await openStore(url, { maxConnections: 1 });
  return {
    async open(tenantId, agentId) {
      const [row] = await store.query(
        `select count(*)::int as n from invocations
         where tenant_id = $1 and agent_id = $2 and status in ('pending', 'running')`,
        [tenantId, agentId],
      );
      return Number(row?.n ?? 0);
    },
    async lastCompletion(tenantId, agentId, since) {
      const [row] = await store.query(
        `select max(completed_at) as last from invocations
         where tenant_id = $1 and agent_id = $2 and created_at >= $3::timestamptz`,
        [tenantId, agentId, since.toISOString()],
      );
      return new Date(String(row?.last)).getTime();
    },
    async vacuumIfNoAutovacuum() {
      const [row] = await store.query("select current_setting('autovacuum') as on", []);
      if (row?.on === "on") return false;
      await store.query("vacuum (analyze) invocations, invocation_requests, invocation_results", []);
      return true;
    },
    close: () => store.close(),
  };
}
