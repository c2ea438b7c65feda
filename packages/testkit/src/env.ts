import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { mintDevToken } from "@gw/auth";

/** The dev secret every test deployment shares, so tokens minted here verify there. */
export const TEST_JWT_SECRET = "test-secret-that-is-at-least-32-characters-long";

/**
 * Where tests get Postgres and Redis (docs/architecture.md, Where tests get Postgres and Redis): DATABASE_URL / REDIS_URL when set, else the
 * embedded store and the in-process queue. `.ci/run` always sets both.
 */
export const TEST_DATABASE_URL = process.env.DATABASE_URL || undefined;
export const TEST_REDIS_URL = process.env.REDIS_URL || undefined;

/** Environment of a test deployment: local upstreams allowed, logs captured, real stores. */
export function testEnv(
  overrides: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return {
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    GW_DEV_JWT_SECRET: TEST_JWT_SECRET,
    GW_ALLOW_HTTP_UPSTREAMS: "true",
    GW_SSRF_ALLOW_CIDRS: "127.0.0.0/8",
    GW_LOG_LEVEL: "info",
    GW_RETRY_BASE_MS: "10",
    // Each deployment its own BullMQ queue, so parallel suites never take each other's jobs.
    GW_QUEUE_NAME: `test-${randomUUID()}`,
    ...overrides,
  };
}

/** A fresh tenant per test: suites share one database without sharing rows. */
export function newTenant(): string {
  return `t-${randomUUID()}`;
}

export function token(tenant: string, sub = "user-1", scopes: string[] = []): Promise<string> {
  return mintDevToken(TEST_JWT_SECRET, { tenant, sub, scopes });
}

/** Collects every log line a deployment writes, for assertions on what was (not) logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void) {
    this.lines.push(chunk.toString("utf8"));
    cb();
  }
  text(): string {
    return this.lines.join("");
  }
}
