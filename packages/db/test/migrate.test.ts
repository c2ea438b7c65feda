// @stores once: opens both stores itself in one pass.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { migrate, openStore } from "../src/index.ts";

const url = process.env.DATABASE_URL;
/** Every migration drizzle-kit generated, in order. */
const tags = (
  JSON.parse(readFileSync(new URL("../migrations/meta/_journal.json", import.meta.url), "utf8")) as {
    entries: Array<{ idx: number; tag: string }>;
  }
).entries
  .sort((a, b) => a.idx - b.idx)
  .map((e) => e.tag);

describe("migrations", () => {
  it("apply on the embedded store and are idempotent", async () => {
    const store = await openStore(undefined);
    try {
      expect(tags[0]).toBe("0000_init");
      expect((await migrate(store)).applied).toEqual(tags);
      expect((await migrate(store)).applied).toEqual([]);
    } finally {
      await store.close();
    }
  });

  // Several replicas start at once: the advisory lock serializes them, exactly one applies.
  it.runIf(url)("run once when four replicas migrate a fresh database at the same time", async () => {
    const admin = await openStore(url);
    const name = `gw_mig_${randomUUID().replaceAll("-", "")}`;
    await admin.session((exec) => exec(`create database ${name}`));
    const dbUrl = new URL(url as string);
    dbUrl.pathname = `/${name}`;
    try {
      const replicas = await Promise.all(
        [1, 2, 3, 4].map(() => openStore(dbUrl.toString(), { maxConnections: 2 })),
      );
      const results = await Promise.all(replicas.map((s) => migrate(s)));
      expect(results.map((r) => r.applied.length).sort()).toEqual([0, 0, 0, tags.length]);
      const rows = await replicas[0]?.session((exec) => exec("select tag from gw_migrations"));
      expect(rows?.map((r) => r.tag)).toEqual(tags);
      await Promise.all(replicas.map((s) => s.close()));
    } finally {
      await admin.session((exec) => exec(`drop database if exists ${name} with (force)`));
      await admin.close();
    }
  });
});
