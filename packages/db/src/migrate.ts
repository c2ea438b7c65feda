import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Store } from "./client.ts";

const MIGRATIONS_DIR = fileURLToPath(new URL("../migrations/", import.meta.url));
/** Arbitrary constant key of the advisory lock every replica takes before migrating. */
const LOCK_KEY = 7_241_913_001;

type Journal = { entries: Array<{ idx: number; tag: string }> };

/**
 * Applies drizzle-kit's generated SQL migrations in order, inside one transaction that first takes
 * a transaction-scoped advisory lock: several replicas starting at once serialize here, and the
 * ones that come second find everything applied. A failing migration rolls back whole and throws.
 */
export async function migrate(store: Store, dir = MIGRATIONS_DIR): Promise<{ applied: string[] }> {
  const journal = JSON.parse(await readFile(`${dir}meta/_journal.json`, "utf8")) as Journal;
  const files = await Promise.all(
    journal.entries
      .sort((a, b) => a.idx - b.idx)
      .map(async (e) => ({ tag: e.tag, sql: await readFile(`${dir}${e.tag}.sql`, "utf8") })),
  );
  return store.session(async (exec) => {
    const applied: string[] = [];
    const statements = [
      "begin",
      `select pg_advisory_xact_lock(${LOCK_KEY})`,
      "create table if not exists gw_migrations (tag text primary key, hash text not null, applied_at timestamptz not null default now())",
    ];
    await exec(statements.join(";\n"));
    try {
      const done = new Set((await exec("select tag from gw_migrations")).map((r) => String(r.tag)));
      for (const file of files) {
        if (done.has(file.tag)) continue;
        const hash = createHash("sha256").update(file.sql).digest("hex");
        const body = file.sql
          .split("--> statement-breakpoint")
          .map((s) => s.trim())
          .filter(Boolean)
          .join(";\n");
        await exec(`${body};\ninsert into gw_migrations (tag, hash) values ('${file.tag}', '${hash}')`);
        applied.push(file.tag);
      }
      await exec("commit");
    } catch (e) {
      await exec("rollback").catch(() => {});
      throw e;
    }
    return { applied };
  });
}
