// @stores once: opens both stores itself in one pass.
import { execFile } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type CredentialRow, credentials, migrate, openStore, type Store } from "@gw/db";
import { ssrfPolicy } from "@gw/upstream";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CredentialError,
  createCredential,
  createKeyring,
  type Keyring,
  openCredential,
  rewrapAll,
  rotateCredential,
} from "../src/index.ts";

const url = process.env.DATABASE_URL || undefined;

/** A database of its own (fresh Postgres database, or a fresh PGlite): rewrapAll sees every row. */
async function freshStore(): Promise<{ store: Store; url?: string; drop: () => Promise<void> }> {
  if (!url) {
    const store = await openStore(undefined);
    await migrate(store);
    return { store, drop: () => store.close() };
  }
  const admin = await openStore(url, { maxConnections: 1 });
  const name = `gw_vault_${randomUUID().replaceAll("-", "")}`;
  await admin.session((exec) => exec(`create database ${name}`));
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${name}`;
  const store = await openStore(dbUrl.toString(), { maxConnections: 4 });
  await migrate(store);
  return {
    store,
    url: dbUrl.toString(),
    drop: async () => {
      await store.close();
      await admin.session((exec) => exec(`drop database if exists ${name}`));
      await admin.close();
    },
  };
}

let env: Awaited<ReturnType<typeof freshStore>>;
beforeAll(async () => {
  env = await freshStore();
});
afterAll(() => env?.drop());

const SSRF = { policy: ssrfPolicy([]), allowHttp: false };
const tenant = () => `t_${randomUUID()}`;
const secretOf = (label: string) => `${label}-${randomBytes(16).toString("hex")}`;

async function rowOf(tenantId: string, id: string, db = env.store.db): Promise<CredentialRow> {
  const [row] = await db
    .select()
    .from(credentials)
    .where(and(eq(credentials.tenantId, tenantId), eq(credentials.id, id)));
  if (!row) throw new Error("row missing");
  return row;
}

async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof CredentialError) return e.reason;
    throw e;
  }
  return "opened";
}

describe("openCredential", () => {
  it("returns the header to inject for bearer and api_key credentials", async () => {
    const keyring = createKeyring(randomBytes(32));
    const tenantId = tenant();
    const ctx = { db: env.store.db, tenantId, keyring, ssrf: SSRF };
    const bearerSecret = secretOf("bearer");
    const bearer = await createCredential({
      ctx,
      input: { name: "b", kind: "bearer", secret: bearerSecret },
    });
    const apiSecret = secretOf("api");
    const apiKey = await createCredential({ ctx, input: { name: "k", kind: "api_key", secret: apiSecret } });
    const named = await createCredential({
      ctx,
      input: { name: "n", kind: "api_key", secret: apiSecret, header_name: "X-Goog-Api-Key" },
    });
    const open = (credentialId: string) =>
      openCredential({ db: env.store.db, keyring, tenantId, credentialId });
    expect(await open(bearer.id)).toEqual({
      header: "authorization",
      value: `Bearer ${bearerSecret}`,
      secret: bearerSecret,
    });
    expect(await open(apiKey.id)).toEqual({ header: "x-api-key", value: apiSecret, secret: apiSecret });
    expect(await open(named.id)).toEqual({ header: "x-goog-api-key", value: apiSecret, secret: apiSecret });

    // The secret is not in the row in the clear.
    const row = await rowOf(tenantId, bearer.id);
    expect(row.ciphertext.includes(Buffer.from(bearerSecret))).toBe(false);
    expect(row.kekId).toBe(keyring.kekId);

    // A rotation applies to the very next open: nothing is cached.
    const next = secretOf("rotated");
    await rotateCredential({ ctx, id: bearer.id, input: { secret: next } });
    expect(await open(bearer.id)).toEqual({ header: "authorization", value: `Bearer ${next}`, secret: next });
  });

  it("opens a credential with allowed_hosts only towards a host it allows", async () => {
    const keyring = createKeyring(randomBytes(32));
    const tenantId = tenant();
    const ctx = { db: env.store.db, tenantId, keyring, ssrf: SSRF };
    const secret = secretOf("scoped");
    const cred = await createCredential({
      ctx,
      input: { name: "s", kind: "bearer", secret, allowed_hosts: ["api.example.com", "*.svc.example.org"] },
    });
    const open = (targetHost?: string) =>
      openCredential({ db: env.store.db, keyring, tenantId, credentialId: cred.id, targetHost }).then(
        (h) => h.value,
        (e: unknown) => (e instanceof CredentialError ? e.reason : "other"),
      );
    expect(await open("api.example.com")).toBe(`Bearer ${secret}`);
    expect(await open("API.EXAMPLE.COM")).toBe(`Bearer ${secret}`);
    expect(await open("a.svc.example.org")).toBe(`Bearer ${secret}`);
    expect(await open("evil.test")).toBe("host_not_allowed");
    expect(await open("api.example.com.evil.test")).toBe("host_not_allowed");
    // No target host named: fail closed.
    expect(await open(undefined)).toBe("host_not_allowed");
    // A PUT that clears the list (null) opens towards any host; absent keeps it.
    await rotateCredential({ ctx, id: cred.id, input: { secret } });
    expect(await open("evil.test")).toBe("host_not_allowed");
    await rotateCredential({ ctx, id: cred.id, input: { secret, allowed_hosts: null } });
    expect(await open("evil.test")).toBe(`Bearer ${secret}`);
  });

  it("fails closed: unknown id, other tenant, other KEK, ciphertext moved between rows or tenants", async () => {
    const keyring = createKeyring(randomBytes(32));
    const a = tenant();
    const b = tenant();
    const db = env.store.db;
    const credA = await createCredential({
      ctx: { db, tenantId: a, keyring, ssrf: SSRF },
      input: { name: "same", kind: "bearer", secret: secretOf("a") },
    });
    const credB = await createCredential({
      ctx: { db, tenantId: b, keyring, ssrf: SSRF },
      input: { name: "same", kind: "bearer", secret: secretOf("b") },
    });
    const open = (tenantId: string, credentialId: string, kr: Keyring = keyring) =>
      reason(openCredential({ db, keyring: kr, tenantId, credentialId }));

    expect(await open(a, "cred_nope")).toBe("not_found");
    expect(await open(a, "cred_00000000-0000-7000-8000-000000000000")).toBe("not_found");
    expect(await open(b, credA.id)).toBe("not_found");
    expect(await open(a, credA.id, createKeyring(randomBytes(32)))).toBe("unknown_kek");

    // An attacker with write access to the table copies B's sealed secret into A's row.
    const rowB = await rowOf(b, credB.id);
    await db
      .update(credentials)
      .set({ ciphertext: rowB.ciphertext, wrappedKey: rowB.wrappedKey })
      .where(eq(credentials.id, credA.id));
    expect(await open(a, credA.id)).toBe("decrypt_failed");
    expect(await open(b, credB.id)).toBe("opened");

    // Tampering with one byte of the stored wrapped key.
    const tampered = Buffer.from(rowB.wrappedKey);
    tampered[20] = (tampered[20] ?? 0) ^ 0xff;
    await db.update(credentials).set({ wrappedKey: tampered }).where(eq(credentials.id, credB.id));
    expect(await open(b, credB.id)).toBe("decrypt_failed");
  });
});

describe("rewrapAll", () => {
  it("moves every data key to the new KEK, leaves ciphertexts, and reports rows it cannot open", async () => {
    const { store } = await freshStore().then((s) => {
      // This test counts rows exactly, so it runs in a database of its own.
      cleanups.push(s.drop);
      return s;
    });
    const db = store.db;
    const oldKr = createKeyring(randomBytes(32));
    const newKr = createKeyring(randomBytes(32));
    const tenantId = tenant();
    const ctx = { db, tenantId, keyring: oldKr, ssrf: SSRF };
    const made: Array<{ id: string; secret: string }> = [];
    for (let i = 0; i < 7; i++) {
      const secret = secretOf(`s${i}`);
      made.push({
        id: (await createCredential({ ctx, input: { name: `c${i}`, kind: "bearer", secret } })).id,
        secret,
      });
    }
    // One row sealed by a third key the operator did not name, one whose wrapped key is damaged.
    const stranger = await createCredential({
      ctx: { ...ctx, keyring: createKeyring(randomBytes(32)) },
      input: { name: "stranger", kind: "bearer", secret: secretOf("x") },
    });
    const damaged = await createCredential({
      ctx,
      input: { name: "damaged", kind: "bearer", secret: secretOf("d") },
    });
    await db
      .update(credentials)
      .set({ wrappedKey: Buffer.alloc(61, 1) })
      .where(eq(credentials.id, damaged.id));

    const before = await Promise.all(made.map((m) => rowOf(tenantId, m.id, db)));
    const report = await rewrapAll({ db, from: oldKr, to: newKr, batchSize: 3 });
    expect(report).toEqual({ rewrapped: 7, unknownKek: [stranger.id], failed: [damaged.id], raced: [] });

    for (const [i, m] of made.entries()) {
      const row = await rowOf(tenantId, m.id, db);
      expect(row.kekId).toBe(newKr.kekId);
      expect(row.ciphertext.equals(before[i]?.ciphertext ?? Buffer.alloc(0))).toBe(true);
      expect(row.version).toBe(1);
      expect(await openCredential({ db, keyring: newKr, tenantId, credentialId: m.id })).toEqual({
        header: "authorization",
        value: `Bearer ${m.secret}`,
        secret: m.secret,
      });
      expect(await reason(openCredential({ db, keyring: oldKr, tenantId, credentialId: m.id }))).toBe(
        "unknown_kek",
      );
    }
    // A second run has nothing left to move.
    expect(await rewrapAll({ db, from: oldKr, to: newKr })).toEqual({
      rewrapped: 0,
      unknownKek: [stranger.id],
      failed: [damaged.id],
      raced: [],
    });
    await expect(rewrapAll({ db, from: newKr, to: newKr })).rejects.toThrow(/same/);
  });

  it.runIf(url)("is what `pnpm --filter @gw/vault rotate-kek` runs against DATABASE_URL", async () => {
    const s = await freshStore();
    cleanups.push(s.drop);
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const tenantId = tenant();
    const secret = secretOf("cli");
    const cred = await createCredential({
      ctx: { db: s.store.db, tenantId, keyring: createKeyring(oldKey), ssrf: SSRF },
      input: { name: "cli", kind: "api_key", secret },
    });
    const run = promisify(execFile);
    const cwd = fileURLToPath(new URL("..", import.meta.url));
    const { stdout } = await run("pnpm", ["run", "--silent", "rotate-kek"], {
      cwd,
      env: {
        ...process.env,
        DATABASE_URL: s.url,
        GW_KMS_KEY_OLD: oldKey.toString("base64"),
        GW_KMS_KEY_NEW: newKey.toString("base64"),
      },
    });
    const report = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    expect(report).toMatchObject({ msg: "credentials re-wrapped", rewrapped: 1, failed: [], unknownKek: [] });
    expect(stdout).not.toContain(oldKey.toString("base64"));
    expect(stdout).not.toContain(newKey.toString("base64"));
    const opened = await openCredential({
      db: s.store.db,
      keyring: createKeyring(newKey),
      tenantId,
      credentialId: cred.id,
    });
    expect(opened).toEqual({ header: "x-api-key", value: secret, secret });

    // Wrong usage exits non-zero with one line and touches nothing.
    const bad = await run("pnpm", ["run", "--silent", "rotate-kek"], {
      cwd,
      env: { ...process.env, DATABASE_URL: s.url, GW_KMS_KEY_OLD: "short", GW_KMS_KEY_NEW: "" },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((bad as { code: number }).code).toBe(2);
    expect((bad as { stderr: string }).stderr).toMatch(/GW_KMS_KEY_OLD must be set/);
  });
});

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});
