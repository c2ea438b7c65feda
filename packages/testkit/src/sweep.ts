import { client, newTenant, type Res, TEST_JWT_SECRET, token } from "@gw/fixtures";
import { expect } from "vitest";
import type { Caller } from "./calls.ts";
import type { TestApp } from "./deploy.ts";

/**
 * What the security suites (the gateway's and the data plane's) share: callers that record every
 * answer they get, so a file can sweep all of them (and its deployment's logs and every table) for
 * secrets at the end, and a tally of cases tried and refused that each file prints. A subpath of
 * its own (`@gw/testkit/sweep`): it asserts with vitest's `expect`, which the package's index must
 * not load (the bench and the conformance run import the index outside vitest).
 */

export type Recorded = { where: string; status: number; headers: string; body: string };

/** A caller like `caller` whose every response lands in `seen`. */
export async function recordingCaller(
  app: TestApp,
  seen: Recorded[],
  opts: { tenant?: string; sub?: string; scopes?: string[] } = {},
): Promise<Caller> {
  const tenant = opts.tenant ?? newTenant();
  const t = await token(tenant, opts.sub ?? "user-1", opts.scopes ?? []);
  const raw = client(app.url, t);
  const call = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const res = await raw(method, path, body, headers);
    record(seen, `${method} ${path}`, res);
    return res;
  };
  return Object.assign(call, { tenant, token: t });
}

export function record(seen: Recorded[], where: string, res: Res): void {
  seen.push({ where, status: res.status, headers: [...res.headers].flat().join("\n"), body: res.text });
}

/** Spellings a secret could be stored or printed in: as is, hex (bytea), base64 (captured bodies). */
function spellings(secret: string): string[] {
  const b = Buffer.from(secret);
  return [secret, b.toString("hex"), b.toString("base64").slice(0, -4) || secret];
}

/**
 * Asserts that no secret appears in any recorded response (status line aside), in any log line of
 * the deployment, or in any row of any table of the database (bytea read as hex, jsonb as text).
 * The dev signing secret is always among the secrets. Returns how many places were searched.
 */
export async function sweepSecrets(app: TestApp, seen: Recorded[], secrets: string[]): Promise<number> {
  const all = [TEST_JWT_SECRET, ...secrets];
  const logs = app.logs.text();
  for (const secret of all) {
    for (const form of spellings(secret)) {
      for (const r of seen) {
        expect(r.body.includes(form), `${r.where} answered a body holding a secret`).toBe(false);
        expect(r.headers.includes(form), `${r.where} answered headers holding a secret`).toBe(false);
      }
      expect(logs.includes(form), "a log line holds a secret").toBe(false);
    }
  }
  const tables = await app.rt.store.query(
    "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
    [],
  );
  // One scan of each table for every secret at once (the test database is shared and grows).
  const patterns = all.flatMap((secret) => [`%${secret}%`, `%${Buffer.from(secret).toString("hex")}%`]);
  for (const { table_name } of tables) {
    const [row] = await app.rt.store.query(
      `select count(*)::int as n from "${String(table_name)}" t where t::text like any($1::text[])`,
      [patterns],
    );
    expect(row?.n, `table ${String(table_name)} holds a secret in the clear`).toBe(0);
  }
  return seen.length + tables.length;
}

/** Counts cases per family and prints them: `tried` and `refused` (what the suite expected). */
export class Tally {
  readonly rows = new Map<string, { tried: number; refused: number }>();
  add(family: string, refused: boolean): void {
    const row = this.rows.get(family) ?? { tried: 0, refused: 0 };
    row.tried++;
    if (refused) row.refused++;
    this.rows.set(family, row);
  }
  /**
   * Asserts a refusal of ours: the expected status (or one of them), never a 5xx, and an
   * `{"error"}` body; counted under `family` either way.
   */
  expectRefused(family: string, res: { status: number; json: unknown }, status: number | number[]): void {
    const ok = Array.isArray(status) ? status.includes(res.status) : res.status === status;
    this.add(family, ok);
    expect(res.status).toBeLessThan(500);
    expect(ok, `status ${res.status}`).toBe(true);
    expect(typeof (res.json as { error?: unknown })?.error).toBe("string");
  }
  print(title: string): void {
    const lines = [...this.rows].map(
      ([k, v]) =>
        `  ${k.padEnd(44)} tried ${String(v.tried).padStart(4)}  refused ${String(v.refused).padStart(4)}`,
    );
    console.log(`${title}\n${lines.join("\n")}`);
  }
}
