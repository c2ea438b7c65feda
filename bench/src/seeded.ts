// What the benches over a seeded million rows share (`bench:analytics`, `bench:recorded`): the
// arguments, the seed's life (reused while it is whole, removed unless `--keep`), the timing of a
// statement (p50/p99 over `--runs`), and the seed's own timing. See docs/performance.md.
import { migrate, openStore, type Store } from "@gw/db";
import { percentile } from "./stats.ts";

export const SEEDED_ROWS = 1_000_000;
const argv = process.argv.slice(2);
const runsAt = argv.indexOf("--runs");
export const RUNS = runsAt >= 0 ? Number(argv[runsAt + 1]) : 50;

/** Removes the tenant's rows, runs `fill` (the seed's statements) and analyses the table. */
export async function seedInvocations(store: Store, tenant: string, fill: () => Promise<unknown>) {
  await unseed(store, tenant);
  const t0 = performance.now();
  await fill();
  const t1 = performance.now();
  await store.query("vacuum analyze invocations", []);
  console.log(
    `seeded ${SEEDED_ROWS.toLocaleString("en")} invocations in ${((t1 - t0) / 1000).toFixed(1)} s (vacuum analyze ${((performance.now() - t1) / 1000).toFixed(1)} s)`,
  );
}

/** The seeded tenant's rows in every table that has them (invocations, the rollup, ...). */
async function unseed(store: Store, tenant: string) {
  const tables = await store.query(
    `select table_name from information_schema.columns
     where table_schema = current_schema() and column_name = 'tenant_id'`,
    [],
  );
  for (const { table_name } of tables)
    await store.query(`delete from "${String(table_name)}" where tenant_id = $1`, [tenant]);
}

/** p50 and p99 of `RUNS` runs of `run` after three to warm the caches and the prepared plan. */
export async function timed<T>(run: () => Promise<T>): Promise<{ p50: string; p99: string; last: T }> {
  for (let i = 0; i < 3; i++) await run();
  const ms: number[] = [];
  let last = undefined as T;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    last = await run();
    ms.push(performance.now() - t);
  }
  return { p50: percentile(ms, 50).toFixed(1), p99: percentile(ms, 99).toFixed(1), last };
}

/**
 * Opens DATABASE_URL, migrates, seeds the tenant when its rows are not all there (or `--reseed`;
 * `seed` gets the window's end, the top of this hour), runs `measure`, and removes the seed unless
 * `--keep`. The exit code.
 */
export async function withSeed(
  tenant: string,
  seed: (store: Store, end: Date) => Promise<void>,
  measure: (store: Store) => Promise<void>,
): Promise<number> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error("DATABASE_URL is required: the bench seeds 1M rows into that Postgres database");
    return 1;
  }
  const store = await openStore(url, { maxConnections: 2 });
  try {
    await migrate(store);
    const [have] = await store.query("select count(*)::int as n from invocations where tenant_id = $1", [
      tenant,
    ]);
    if (argv.includes("--reseed") || Number(have?.n) !== SEEDED_ROWS) {
      await seed(store, new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000));
    } else console.log(`reusing ${SEEDED_ROWS.toLocaleString("en")} seeded invocations (--reseed to redo)`);
    const [version] = await store.query("select version() as v", []);
    console.log(String(version?.v));
    await measure(store);
    if (!argv.includes("--keep")) {
      await unseed(store, tenant);
      console.log("seed removed (--keep leaves it for the next run)");
    }
    return 0;
  } finally {
    await store.close();
  }
}
