// @stores both: receipt references are read from the store.
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ConfigError, loadConfig } from "@gw/config";
import { newId } from "@gw/core";
import { invocationRepo } from "@gw/invocations";
import { createDecisionRecorder } from "@gw/policy";
import { client, newTenant, serveApp, type TestApp, token } from "@gw/testkit";
import {
  calculateJwkThumbprint,
  compactVerify,
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
} from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
const KEY = JSON.stringify(jwk);
const ACTOR = "https://gateway.test/actors/receipts";
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

let app: TestApp;
let off: TestApp;
beforeAll(async () => {
  [app, off] = await Promise.all([
    serveApp(createControlPlaneApp, { GW_RECEIPT_SIGNING_KEY: KEY, GW_RECEIPT_ACTOR: ACTOR }),
    serveApp(createControlPlaneApp),
  ]);
});
afterAll(async () => {
  await Promise.all([app?.close(), off?.close()]);
  // After everything this suite did (and shutdown), the private key was never logged.
  for (const logs of [app.logs.text(), off.logs.text()]) {
    expect(logs).not.toContain(jwk.d as string);
  }
});

async function invocationOf(t: TestApp, tenant: string) {
  const id = newId("inv");
  await invocationRepo.insert(t.rt.store.db, tenant, {
    id,
    agentId: "agt_r",
    mode: "transactional",
    status: "succeeded",
  });
  return id;
}

/** Replaces one character of a compact JWS segment with another valid base64url character. */
function flip(jws: string, segment: 1 | 2, at = 10): string {
  const parts = jws.split(".");
  const s = parts[segment] as string;
  parts[segment] = s.slice(0, at) + (s[at] === "A" ? "B" : "A") + s.slice(at + 1);
  return parts.join(".");
}

describe("receipts: published key", () => {
  it("serves the public JWK without authentication; kid is its RFC 7638 thumbprint; no private part", async () => {
    const res = await fetch(`${app.url}/v1/receipts/jwks`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { keys: Array<Record<string, string>> };
    expect(body.keys).toHaveLength(1);
    const [k] = body.keys as [Record<string, string>];
    expect(k).toEqual({
      kty: "OKP",
      crv: "Ed25519",
      x: jwk.x,
      kid: expect.any(String),
      alg: "EdDSA",
      use: "sig",
    });
    expect(k.kid).toBe(await calculateJwkThumbprint({ kty: "OKP", crv: "Ed25519", x: jwk.x as string }));
    expect(JSON.stringify(body)).not.toContain(jwk.d as string);
  });

  it("answers {keys: []} when receipts are off", async () => {
    const res = await fetch(`${off.url}/v1/receipts/jwks`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ keys: [] });
  });

  it("capabilities report the emitter and the actor, never the key", async () => {
    const call = client(app.url, await token(newTenant()));
    const caps = await call("GET", "/v1/capabilities");
    expect(caps.json.posture).toMatchObject({ receipts_enabled: true, receipt_actor: ACTOR });
    expect(caps.json.surfaces.receipts).toBe(true);
    expect(caps.text).not.toContain(jwk.d as string);
    const offCaps = await client(off.url, await token(newTenant()))("GET", "/v1/capabilities");
    expect(offCaps.json.posture).toMatchObject({ receipts_enabled: false, receipt_actor: "" });
  });
});

describe("receipts: per invocation", () => {
  it("a terminal invocation's receipt is stored, linked, readable and verifies with the published key", async () => {
    const tenant = newTenant();
    const id = await invocationOf(app, tenant);
    const digests = { request: `sha256:${"a".repeat(64)}`, response: `sha256:${"b".repeat(64)}` };
    app.rt.receipts?.invocation({
      tenantId: tenant,
      invocationId: id,
      agentId: "agt_r",
      status: "succeeded",
      digests,
      settlement: { status: "settled", tx_hash: "0xabc" },
    });
    await app.rt.receipts?.drain(5_000);
    const call = client(app.url, await token(tenant));
    const res = await call("GET", `/v1/invocations/${id}/receipt`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      invocation_id: id,
      attested: true,
      artifact_id: expect.stringMatching(/^rcpt_/),
      actor: ACTOR,
      signed_at: expect.any(String),
      jws: expect.any(String),
    });
    expect(res.text).not.toContain(jwk.d as string);
    const inv = await call("GET", `/v1/invocations/${id}`);
    expect(inv.json.receipt_artifact_id).toBe(res.json.artifact_id);

    const keys = createRemoteJWKSet(new URL(`${app.url}/v1/receipts/jwks`));
    const { payload, protectedHeader } = await compactVerify(res.json.jws, keys, { algorithms: ["EdDSA"] });
    expect(protectedHeader.alg).toBe("EdDSA");
    expect(JSON.parse(new TextDecoder().decode(payload))).toEqual({
      artifact_id: res.json.artifact_id,
      actor: ACTOR,
      action: "gateway.invocation",
      subject: id,
      tenant_id: tenant,
      agent_id: "agt_r",
      status: "succeeded",
      digests,
      settlement: { status: "settled", tx_hash: "0xabc" },
      signed_at: res.json.signed_at,
    });

    // One changed byte of payload or signature, or another key: verification fails.
    await expect(compactVerify(flip(res.json.jws, 1), keys, { algorithms: ["EdDSA"] })).rejects.toThrow();
    await expect(compactVerify(flip(res.json.jws, 2), keys, { algorithms: ["EdDSA"] })).rejects.toThrow();
    const other = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" });
    const kid = decodeProtectedHeader(res.json.jws).kid as string;
    const impostor = createLocalJWKSet({ keys: [{ ...other, kid, alg: "EdDSA" }] });
    await expect(compactVerify(res.json.jws, impostor, { algorithms: ["EdDSA"] })).rejects.toThrow();
  });

  it("without a receipt: not_recorded when emitting, receipts_disabled when off", async () => {
    const tenant = newTenant();
    const id = await invocationOf(app, tenant);
    const res = await client(app.url, await token(tenant))("GET", `/v1/invocations/${id}/receipt`);
    expect(res.json).toEqual({ invocation_id: id, attested: false, reason: "not_recorded" });
    const offId = await invocationOf(off, tenant);
    const offRes = await client(off.url, await token(tenant))("GET", `/v1/invocations/${offId}/receipt`);
    expect(offRes.json).toEqual({ invocation_id: offId, attested: false, reason: "receipts_disabled" });
  });

  it("another tenant's invocation, a malformed id, and no token: 404, 404, 401", async () => {
    const tenant = newTenant();
    const id = await invocationOf(app, tenant);
    app.rt.receipts?.invocation({
      tenantId: tenant,
      invocationId: id,
      agentId: "agt_r",
      status: "succeeded",
    });
    await app.rt.receipts?.drain(5_000);
    const other = client(app.url, await token(newTenant()));
    const res = await other("GET", `/v1/invocations/${id}/receipt`);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: expect.any(String) });
    expect((await other("GET", "/v1/invocations/inv_nope/receipt")).status).toBe(404);
    const anon = await client(app.url)("GET", `/v1/invocations/${id}/receipt`);
    expect(anon.status).toBe(401);
    expect(anon.text).toBe("");
  });
});

describe("receipts: per agent", () => {
  it("an agent with emit_receipts false gets none; one with true or null gets them", async () => {
    const tenant = newTenant();
    const call = client(app.url, await token(tenant));
    const quiet = (
      await call("POST", "/v1/agents", {
        name: "q",
        upstream_url: "https://api.example.com/x",
        emit_receipts: false,
      })
    ).json.id as string;
    const loud = (await call("POST", "/v1/agents", { name: "l", upstream_url: "https://api.example.com/x" }))
      .json.id as string;
    const ids: Record<string, string> = {};
    for (const agentId of [quiet, loud]) {
      const id = newId("inv");
      ids[agentId] = id;
      await invocationRepo.insert(app.rt.store.db, tenant, {
        id,
        agentId,
        mode: "streaming",
        status: "succeeded",
      });
      app.rt.receipts?.invocation({ tenantId: tenant, invocationId: id, agentId, status: "succeeded" });
    }
    await app.rt.receipts?.drain(5_000);
    expect((await call("GET", `/v1/invocations/${ids[quiet]}/receipt`)).json).toMatchObject({
      attested: false,
      reason: "not_recorded",
    });
    expect((await call("GET", `/v1/invocations/${ids[loud]}/receipt`)).json.attested).toBe(true);
  });
});

describe("receipts: per decision", () => {
  it("a decision's receipt id appears on the decision and attests its action", async () => {
    const tenant = newTenant();
    const decisionId = await createDecisionRecorder(app.rt.store.query).record(
      {
        tenantId: tenant,
        agentId: "agt_d",
        protocol: "mcp",
        rpcMethod: "tools/call",
        mcpTool: "rm",
        model: null,
        bodySize: 3,
        principal: { sub: "u", scopes: [], claims: {} },
        agentName: "a",
        mode: "streaming",
        arguments: undefined,
      },
      { action: "deny", matchedRule: "1", reason: "rule 1" },
    );
    app.rt.receipts?.decision({ tenantId: tenant, decisionId, agentId: "agt_d", action: "deny" });
    await app.rt.receipts?.drain(5_000);
    const list = await client(app.url, await token(tenant))("GET", "/v1/policy/decisions");
    const [d] = list.json.data;
    expect(d.id).toBe(decisionId);
    expect(d.receipt_artifact_id).toMatch(/^rcpt_/);
    const { receiptRepo } = await import("@gw/receipts");
    const stored = await receiptRepo.forSubject(app.rt.store.db, tenant, decisionId);
    const keys = createRemoteJWKSet(new URL(`${app.url}/v1/receipts/jwks`));
    const { payload } = await compactVerify(stored?.jws as string, keys);
    const body = JSON.parse(new TextDecoder().decode(payload));
    expect(body).toMatchObject({
      artifact_id: d.receipt_artifact_id,
      action: "gateway.policy_decision",
      subject: decisionId,
      status: "deny",
      agent_id: "agt_d",
    });
    expect(body.digests).toBeUndefined();
  });
});

describe("pnpm receipt verify", () => {
  it("verifies offline against a JWKS file or URL; exit 1 for a changed byte; 2 for bad usage", async () => {
    const tenant = newTenant();
    const id = await invocationOf(app, tenant);
    app.rt.receipts?.invocation({ tenantId: tenant, invocationId: id, agentId: "agt_r", status: "failed" });
    await app.rt.receipts?.drain(5_000);
    const { jws } = (await client(app.url, await token(tenant))("GET", `/v1/invocations/${id}/receipt`)).json;
    const dir = await mkdtemp(join(tmpdir(), "jwks-"));
    const file = join(dir, "jwks.json");
    await writeFile(file, await (await fetch(`${app.url}/v1/receipts/jwks`)).text());
    const run = (...args: string[]) =>
      promisify(execFile)(process.execPath, ["--import", "tsx", "packages/receipts/src/cli.ts", ...args], {
        cwd: ROOT,
      }).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
      );
    const ok = await run("verify", jws, "--jwks", file);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ subject: id, status: "failed" });
    expect((await run("verify", jws, "--jwks", `${app.url}/v1/receipts/jwks`)).code).toBe(0);
    expect((await run("verify", flip(jws, 1), "--jwks", file)).code).toBe(1);
    expect((await run("verify", flip(jws, 2), "--jwks", file)).code).toBe(1);
    expect((await run("verify")).code).toBe(2);
  });
});

describe("receipt configuration", () => {
  it.each([
    [{ GW_RECEIPT_SIGNING_KEY: KEY }, /set together/],
    [{ GW_RECEIPT_ACTOR: ACTOR }, /set together/],
    [
      { GW_RECEIPT_SIGNING_KEY: JSON.stringify({ ...jwk, d: "AAAA" }), GW_RECEIPT_ACTOR: ACTOR },
      /GW_RECEIPT_SIGNING_KEY/,
    ],
    [
      { GW_RECEIPT_SIGNING_KEY: JSON.stringify({ ...jwk, crv: "P-256" }), GW_RECEIPT_ACTOR: ACTOR },
      /Ed25519/,
    ],
    [{ GW_RECEIPT_SIGNING_KEY: "nope", GW_RECEIPT_ACTOR: ACTOR }, /GW_RECEIPT_SIGNING_KEY/],
    [{ GW_RECEIPT_SIGNING_KEY: KEY, GW_RECEIPT_ACTOR: "not a uri" }, /GW_RECEIPT_ACTOR/],
  ])("refuses %# at start-up with one line that never holds the key", (env, message) => {
    let err: unknown;
    try {
      loadConfig(env, { defaultPort: 0 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain(jwk.d as string);
  });
});
