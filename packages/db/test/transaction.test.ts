// @stores once: opens both stores itself in one pass.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { openStore } from "../src/client.ts";
import { migrate } from "../src/migrate.ts";

// `Store.transaction` (raw SQL in one transaction): its statements commit together or not at all,
// and a setting made local to it (`set_config(..., true)`, as the analytics read does) ends with it.

const stores: Array<[string, string | undefined]> = [["embedded", undefined]];
if (process.env.DATABASE_URL) stores.push(["postgres", process.env.DATABASE_URL]);

describe("store transaction", () => {
  it.each(stores)(
    "commits together, rolls back on a throw, settings end with it (%s store)",
    async (_n, url) => {
      const store = await openStore(url);
      try {
        await migrate(store);
        const tenant = `t-${randomUUID()}`;
        const insert = "insert into invocation_days_done (tenant_id, day) values ($1, $2)";
        const count = async () =>
          (
            await store.query("select count(*)::int as n from invocation_days_done where tenant_id = $1", [
              tenant,
            ])
          )[0]?.n;
        const workMem = async () => (await store.query("select current_setting('work_mem') as w", []))[0]?.w;
        const before = await workMem();

        const inside = await store.transaction(async (query) => {
          await query("select set_config('work_mem', '7MB', true)", []);
          await query(insert, [tenant, "2026-01-01T00:00:00Z"]);
          await query(insert, [tenant, "2026-01-02T00:00:00Z"]);
          return (await query("select current_setting('work_mem') as w", []))[0]?.w;
        });
        expect(inside).toBe("7MB");
        expect(await count()).toBe(2);
        expect(await workMem()).toBe(before);

        await expect(
          store.transaction(async (query) => {
            await query(insert, [tenant, "2026-01-03T00:00:00Z"]);
            throw new Error("abandoned");
          }),
        ).rejects.toThrow("abandoned");
        expect(await count()).toBe(2);
        await store.query("delete from invocation_days_done where tenant_id = $1", [tenant]);
      } finally {
        await store.close();
      }
    },
  );
});
