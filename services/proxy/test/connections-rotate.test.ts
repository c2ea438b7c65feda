// @stores once: Postgres only: rotate-kek is an operator command run against DATABASE_URL.
import { execFile } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  client,
  freePort,
  newTenant,
  TEST_DATABASE_URL,
  type TestApp,
  token,
  type Upstream,
} from "@gw/testkit";
import { kekIdOf } from "@gw/vault";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handoffCode, type Provider, startProvider, startWhoami } from "./connections/provider.ts";
import { startGateway } from "./helpers.ts";

// Rotating the key-encryption key (docs/credentials.md) with people's grants in the database
// (docs/connections.md): `rotate-kek` re-wraps the grants, a connect in progress and a connect
// waiting for the console along with the credentials; a gateway holding only the new key then
// injects each person's token, finishes both pending connects and refreshes a grant, and none of
// the rows still opens under the old key.

const run = promisify(execFile);
const vaultDir = fileURLToPath(new URL("../../../packages/vault", import.meta.url));

describe.skipIf(!TEST_DATABASE_URL)("rotate-kek with per-user grants", () => {
  let provider: Provider;
  let upstream: Upstream;
  let dbUrl = "";
  let drop = async () => {};
  const apps: TestApp[] = [];

  beforeAll(async () => {
    provider = await startProvider();
    upstream = await startWhoami(provider);
    // A database of its own: the command rewraps every row of the database it is given (made
    // through a gateway on the shared test database).
    const shared = await startGateway();
    const name = `gw_rotate_${randomUUID().replaceAll("-", "")}`;
    await shared.rt.store.query(`create database ${name}`, []);
    const url = new URL(TEST_DATABASE_URL ?? "");
    url.pathname = `/${name}`;
    dbUrl = url.toString();
    drop = async () => {
      await shared.rt.store.query(`drop database if exists ${name} with (force)`, []);
      await shared.close();
    };
  });
  afterAll(async () => {
    for (const app of apps) await app.close().catch(() => {});
    await provider?.close();
    await upstream?.close();
    await drop();
  });

  it("re-wraps grants and pending connects; the gateway on the new key alone serves, completes and refreshes them", async () => {
    const oldKey = randomBytes(32).toString("base64");
    const newKey = randomBytes(32).toString("base64");
    const port = await freePort();
    const env = (key: string) => ({
      DATABASE_URL: dbUrl,
      GW_KMS_KEY: key,
      PORT: String(port),
      GW_PUBLIC_URL: `http://127.0.0.1:${port}`,
    });
    let gw = await startGateway(env(oldKey));
    apps.push(gw);
    const tenant = newTenant();
    const admin = client(gw.url, await token(tenant, "admin"));
    const clientId = `tracker-${randomBytes(4).toString("hex")}`;
    const secret = `rotate-SECRET-${randomBytes(16).toString("hex")}`;
    provider.clients.set(clientId, { secret });
    const cred = await admin("POST", "/v1/credentials", {
      name: "tracker",
      kind: "oauth2_authorization_code",
      client_id: clientId,
      secret,
      issuer: provider.url,
    });
    expect(cred.status, cred.text).toBe(201);
    const agent = await admin("POST", "/v1/agents", {
      name: "a",
      upstream_url: upstream.url,
      credential_ref: cred.json.id,
    });
    expect(agent.status, agent.text).toBe(201);
    const person = async (sub: string) => client(gw.url, await token(tenant, sub));
    const call = async (sub: string) =>
      (await person(sub))("POST", `/v1/proxy/${agent.json.id}/stream`, { q: 1 });

    // Ann is connected; Ben's connect came back from the provider but waits for his console;
    // Cy's connect is still at the provider.
    const ann = await person("ann");
    const annStart = await ann("POST", "/v1/connections", { credential_id: cred.json.id });
    const annBack = await provider.consent(annStart.json.authorize_url, "ann");
    const annDone = await ann("POST", "/v1/connections/complete", { code: handoffCode(annBack.location) });
    expect(annDone.status, annDone.text).toBe(201);
    expect((await call("ann")).json).toEqual({ sub: "ann" });
    const ben = await person("ben");
    const benStart = await ben("POST", "/v1/connections", { credential_id: cred.json.id });
    const benCode = handoffCode((await provider.consent(benStart.json.authorize_url, "ben")).location);
    const cy = await person("cy");
    const cyStart = await cy("POST", "/v1/connections", { credential_id: cred.json.id });
    await gw.close();

    const { stdout } = await run("pnpm", ["run", "--silent", "rotate-kek"], {
      cwd: vaultDir,
      env: { ...process.env, DATABASE_URL: dbUrl, GW_KMS_KEY_OLD: oldKey, GW_KMS_KEY_NEW: newKey },
    });
    const report = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    expect(report).toMatchObject({
      rewrapped: 1,
      failed: [],
      unknownKek: [],
      connections: { rewrapped: 3, failed: [], unknownKek: [], raced: [] },
    });
    for (const leak of [oldKey, newKey, secret, ...provider.issued]) {
      if (leak) expect(stdout).not.toContain(leak);
    }

    // The old key is gone: a gateway with the new key alone.
    gw = await startGateway(env(newKey));
    apps.push(gw);
    const store = gw.rt.store;
    for (const table of ["connections", "connection_states", "connection_handoffs"]) {
      const rows = await store.query(`select kek_id from ${table} where tenant_id = $1`, [tenant]);
      for (const r of rows as Array<{ kek_id: string }>) {
        expect(r.kek_id, table).toBe(kekIdOf(Buffer.from(newKey, "base64")));
      }
    }
    expect((await call("ann")).json).toEqual({ sub: "ann" });
    const benDone = await (await person("ben"))("POST", "/v1/connections/complete", { code: benCode });
    expect(benDone.status, benDone.text).toBe(201);
    expect((await call("ben")).json).toEqual({ sub: "ben" });
    const cyBack = await provider.consent(cyStart.json.authorize_url, "cy");
    const cyDone = await (await person("cy"))("POST", "/v1/connections/complete", {
      code: handoffCode(cyBack.location),
    });
    expect(cyDone.status, cyDone.text).toBe(201);
    expect((await call("cy")).json).toEqual({ sub: "cy" });
    // A refresh opens the re-wrapped grant (its refresh token) and seals the rotated one.
    await store.query("update connections set expires_at = now() where tenant_id = $1 and sub = 'ann'", [
      tenant,
    ]);
    gw.rt.oauth.forget(tenant, cred.json.id);
    const refreshes = provider.refreshes.length;
    expect((await call("ann")).json).toEqual({ sub: "ann" });
    expect(provider.refreshes.length).toBe(refreshes + 1);
    // A second run finds nothing left under the old key.
    const again = await run("pnpm", ["run", "--silent", "rotate-kek"], {
      cwd: vaultDir,
      env: { ...process.env, DATABASE_URL: dbUrl, GW_KMS_KEY_OLD: oldKey, GW_KMS_KEY_NEW: newKey },
    });
    expect(JSON.parse(again.stdout.trim().split("\n").at(-1) ?? "{}")).toMatchObject({
      rewrapped: 0,
      connections: { rewrapped: 0, failed: [], unknownKek: [], raced: [] },
    });
  });
});
