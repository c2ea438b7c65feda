import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { buildConsole } from "../packages/console/build.mjs";

/**
 * Where the main pass gets Postgres and Redis (docs/testing.md): DATABASE_URL / REDIS_URL when set;
 * else, when a Docker engine answers, containers started here through testcontainers; else the
 * embedded store and the in-process queue (the Redis-only suites then say they were skipped and why).
 * Variables set here are inherited by the test workers, which start after this runs.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  // The console is served from its build output (docs/console.md); built fresh for every run.
  await buildConsole();
  // The embedded pass's own setup (test/embedded-pass.ts) hides the servers from its files.
  if (process.env.GW_TEST_PASS === "embedded") return undefined;
  if (process.env.DATABASE_URL && process.env.REDIS_URL) return undefined;
  if (!(await dockerAnswers())) {
    console.log(
      "test stores: no DATABASE_URL/REDIS_URL and no Docker engine: embedded store, in-process queue",
    );
    return undefined;
  }
  const stops: Array<() => Promise<unknown>> = [];
  if (!process.env.DATABASE_URL) {
    const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
    const pg = await new PostgreSqlContainer("postgres:16-alpine").start();
    process.env.DATABASE_URL = pg.getConnectionUri();
    stops.push(() => pg.stop());
  }
  if (!process.env.REDIS_URL) {
    const { RedisContainer } = await import("@testcontainers/redis");
    const redis = await new RedisContainer("redis:7-alpine").start();
    process.env.REDIS_URL = redis.getConnectionUrl();
    stops.push(() => redis.stop());
  }
  console.log("test stores: Postgres and Redis in containers (testcontainers)");
  return async () => {
    for (const stop of stops) await stop().catch(() => {});
  };
}

async function dockerAnswers(): Promise<boolean> {
  try {
    await promisify(execFile)("docker", ["info", "--format", "{{.ServerVersion}}"], { timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}
