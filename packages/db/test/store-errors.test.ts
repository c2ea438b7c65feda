// @stores once: opens both stores itself in one pass.
import { isStoreUnavailable } from "@gw/core";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openStore } from "../src/client.ts";
import { agents } from "../src/schema/index.ts";

// The errors the real drivers throw, as `isStoreUnavailable` must read them (docs/reliability.md): a
// store nobody answers on is unavailable on the query builder's path (drizzle wraps the driver's
// error in its own) and on the raw one; a statement the store refuses is a bug on both.

/** What `fn` threw (fails the test when it did not throw). */
async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected a failure");
}

describe("store errors from the real drivers", () => {
  it("a refused connection: unavailable through the query builder and the raw query", async () => {
    // Port 1: nothing listens there.
    const store = await openStore("postgres://postgres@127.0.0.1:1/none");
    try {
      const built = await thrown(() => store.db.select().from(agents).limit(1));
      // The wrapper's own top-level error carries no code: only its cause says what happened.
      expect((built as { code?: unknown }).code).toBeUndefined();
      expect(isStoreUnavailable(built)).toBe(true);
      expect(isStoreUnavailable(await thrown(() => store.query("select 1", [])))).toBe(true);
    } finally {
      await store.close();
    }
  });

  const stores: Array<[string, string | undefined]> = [["embedded", undefined]];
  if (process.env.DATABASE_URL) stores.push(["postgres", process.env.DATABASE_URL]);
  it.each(stores)("a statement the store refuses is not unavailable (%s store)", async (_name, url) => {
    const store = await openStore(url);
    try {
      const raw = await thrown(() => store.query("select * from no_such_table_here", []));
      expect((raw as { code?: unknown }).code).toBe("42P01");
      expect(isStoreUnavailable(raw)).toBe(false);
      const built = await thrown(() => store.db.execute(sql`select * from no_such_table_here`));
      expect((built as { cause?: { code?: unknown } }).cause?.code).toBe("42P01");
      expect(isStoreUnavailable(built)).toBe(false);
    } finally {
      await store.close();
    }
  });
});
