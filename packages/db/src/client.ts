import { join } from "node:path";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import * as schema from "./schema/index.ts";
import { socketUrl } from "./socket-url.ts";
import { createStoreHealth, observed, type StoreHealth } from "./store-health.ts";

export type Schema = typeof schema;
/** One type for both drivers: postgres-js in deployments, PGlite for the embedded store. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export type Exec = (sql: string) => Promise<Array<Record<string, unknown>>>;

/** Parameterized SQL with a constant text: postgres-js prepares it once per connection. */
export type Query = (text: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

/**
 * Runs `fn` in one transaction on one connection, `query` bound to it: for statements that commit
 * together or need a setting local to the transaction (`set_config(name, value, true)`).
 */
export type Transact = <T>(fn: (query: Query) => Promise<T>) => Promise<T>;

export type Store = {
  db: Db;
  /** Raw parameterized SQL on the same pool as `db`, for hot-path statements (no query builder). */
  query: Query;
  /**
   * The same on the pool where the data plane writes invocation records that may trade durability
   * for latency: its commits do not wait for the WAL flush (`synchronous_commit = off`) when
   * `syncRecords` is false. The same pool as `query` otherwise and on the embedded store.
   */
  recordsQuery: Query;
  /** Raw parameterized SQL in one transaction, on the same pool as `query`. */
  transaction: Transact;
  /** Postgres at a URL, or the embedded store (PGlite) in this process. */
  kind: "postgres" | "embedded";
  /** The embedded store's data directory (`openStore`); undefined when it lives in memory (or on Postgres). */
  dataDir: string | undefined;
  /** Whether this process's store calls lately found the store down (fed by `query` and `recordsQuery`). */
  health: StoreHealth;
  /**
   * Runs `fn` on one dedicated connection with a raw multi-statement SQL executor (the migrator
   * needs a session for its transaction and advisory lock; the pool cannot promise one).
   */
  session: <T>(fn: (exec: Exec) => Promise<T>) => Promise<T>;
  /**
   * Postgres LISTEN on `channel` (a dedicated connection that reconnects by itself); returns the
   * unlisten. Every process on the same database hears every NOTIFY, its own included.
   */
  listen: (channel: string, onPayload: (payload: string) => void) => Promise<() => Promise<void>>;
  /** NOTIFY `channel` with `payload` (delivered to listeners when the sending statement commits). */
  notify: (channel: string, payload: string) => Promise<void>;
  ping: () => Promise<void>;
  close: () => Promise<void>;
};

/** Where in its data directory the embedded store keeps its files; the rest is its owner's. */
export const EMBEDDED_STORE_SUBDIR = "postgres";

/**
 * Opens the store: postgres-js when `url` is given, else the embedded store (PGlite, dev only): on
 * disk under `dataDir` (in EMBEDDED_STORE_SUBDIR) when given — one process per directory, which the
 * caller makes sure of — else in memory, its contents lost when the process ends. All run the same
 * migrations and SQL.
 */
export async function openStore(
  url: string | undefined,
  opts: { maxConnections?: number; syncRecords?: boolean; dataDir?: string } = {},
): Promise<Store> {
  if (url) {
    const { default: postgres } = await import("postgres");
    const { drizzle } = await import("drizzle-orm/postgres-js");
    // A store that does not answer must fail a call within seconds, not hang it (docs/reliability.md, Bounded waits).
    const connectTimeout = 2;
    // postgres-js waits `backoff(n)` seconds before the n-th reconnect after failed connections,
    // counted across the pool: its default grows to 10–20 s within a few seconds of an outage, so
    // the pool stayed away that long after the store was back. Capped at 1 s (docs/reliability.md).
    const backoff = (retries: number) => Math.min(0.05 * 2 ** retries, 1) * (0.5 + Math.random() / 2);
    // libpq's Unix-socket forms of the URL (socket-url.ts): a co-located Postgres without TCP.
    const target = socketUrl(url);
    const client = postgres(target.url, {
      path: target.path,
      max: opts.maxConnections ?? 10,
      onnotice: () => {},
      connect_timeout: connectTimeout,
      backoff,
      // Keep timestamps as strings in the driver; drizzle's mapping turns them into Dates.
      connection: { application_name: "agent-gateway", TimeZone: "UTC" },
    });
    const db = drizzle(client, { schema }) as unknown as Db;
    const recordsClient =
      opts.syncRecords === false
        ? postgres(target.url, {
            path: target.path,
            max: opts.maxConnections ?? 10,
            onnotice: () => {},
            connect_timeout: connectTimeout,
            backoff,
            connection: {
              application_name: "agent-gateway-records",
              TimeZone: "UTC",
              synchronous_commit: "off",
            },
          })
        : undefined;
    const health = createStoreHealth(() => client`select 1`);
    const query: Query = observed(
      async (text, params) => [...(await client.unsafe(text, params as never[], { prepare: true }))],
      health,
    );
    const recordsQuery: Query = recordsClient
      ? observed(
          async (text, params) => [
            ...(await recordsClient.unsafe(text, params as never[], { prepare: true })),
          ],
          health,
        )
      : query;
    return {
      db,
      query,
      recordsQuery,
      transaction: (fn) =>
        client.begin((sql) =>
          fn(
            observed(
              async (text, params) => [...(await sql.unsafe(text, params as never[], { prepare: true }))],
              health,
            ),
          ),
        ) as Promise<Awaited<ReturnType<typeof fn>>>,
      kind: "postgres",
      dataDir: undefined,
      health,
      session: async (fn) => {
        const conn = await client.reserve();
        try {
          return await fn(async (text) => {
            const result = await conn.unsafe(text).simple();
            // A multi-statement query answers one result per statement; keep the last.
            const last = Array.isArray(result[0]) ? result.at(-1) : result;
            return (last ?? []) as unknown as Array<Record<string, unknown>>;
          });
        } finally {
          conn.release();
        }
      },
      listen: async (channel, onPayload) => {
        const { unlisten } = await client.listen(channel, onPayload);
        return async () => {
          await unlisten().catch(() => {});
        };
      },
      notify: async (channel, payload) => {
        await client.notify(channel, payload);
      },
      ping: async () => {
        await client`select 1`;
      },
      close: async () => {
        await Promise.all([client.end({ timeout: 5 }), recordsClient?.end({ timeout: 5 })]);
      },
    };
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  const client = new PGlite(opts.dataDir ? join(opts.dataDir, EMBEDDED_STORE_SUBDIR) : undefined);
  await client.waitReady;
  const db = drizzle(client, { schema }) as unknown as Db;
  const health = createStoreHealth(() => client.query("select 1"));
  const query: Query = observed(
    async (text, params) => (await client.query<Record<string, unknown>>(text, params)).rows,
    health,
  );
  return {
    db,
    query,
    recordsQuery: query,
    transaction: (fn) =>
      client.transaction((tx) =>
        fn(
          observed(
            async (text, params) => (await tx.query<Record<string, unknown>>(text, params)).rows,
            health,
          ),
        ),
      ),
    kind: "embedded",
    dataDir: opts.dataDir,
    health,
    session: (fn) =>
      fn(async (text) => {
        const results = await client.exec(text);
        return (results.at(-1)?.rows ?? []) as Array<Record<string, unknown>>;
      }),
    listen: async (channel, onPayload) => {
      const unlisten = await client.listen(channel, onPayload);
      return async () => {
        await unlisten().catch(() => {});
      };
    },
    notify: async (channel, payload) => {
      await client.query("select pg_notify($1, $2)", [channel, payload]);
    },
    ping: async () => {
      await client.query("select 1");
    },
    close: () => client.close(),
  };
}
