// @stores once: Postgres only (a pool's warnings); the embedded store has none.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store, storeWarnings } from "../src/index.ts";

describe("store warnings", () => {
  it("the embedded store has none", async () => {
    const store = await openStore(undefined);
    try {
      expect(await storeWarnings(store)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe.runIf(Boolean(process.env.DATABASE_URL))("store warnings (postgres)", () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore(process.env.DATABASE_URL);
  });
  afterAll(() => store.close());

  it("says autovacuum is off exactly when the server runs without it", async () => {
    const [row] = await store.query("select setting from pg_settings where name = 'autovacuum'", []);
    const warnings = await storeWarnings(store);
    if (row?.setting === "off") expect(warnings).toEqual([expect.stringContaining("autovacuum off")]);
    else expect(warnings).toEqual([]);
  });
});
