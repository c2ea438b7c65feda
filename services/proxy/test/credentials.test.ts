// @stores both: credentials are sealed rows opened at dial time.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Res, startUpstream, type TestApp, type Upstream } from "@gw/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, pollDone, recordDone, startGateway } from "./helpers.ts";

// Upstream credentials at the data plane: what the upstream receives when an agent has a credential, and
// that the secret goes nowhere else, through the real all-in-one gateway over sockets.

const KEY_A = randomBytes(32).toString("base64");
const KEY_B = randomBytes(32).toString("base64");
const CREDENTIAL_ERROR = { error: "upstream credential unavailable" };

let gw: TestApp;
/** Every deployment of the run: the leak sweep reads all their logs. */
const gateways: TestApp[] = [];
const upstreams: Upstream[] = [];
/** Every secret the run stored, every response it got, every tenant it used. */
const secrets: string[] = [];
const responses: Array<{ what: string; status: number; headers: string; text: string }> = [];
const tenants: Caller[] = [];

beforeAll(async () => {
  // Trace level: the "never in a log line" sweep covers every line the gateway can write.
  gw = await startGateway({ GW_KMS_KEY: KEY_A, GW_LOG_LEVEL: "trace" });
  gateways.push(gw);
});
afterAll(async () => {
  for (const g of gateways) await g.close();
  await Promise.all(upstreams.map((u) => u.close()));
});

/** A distinctive secret nobody else could produce by accident. */
function newSecret(label: string): string {
  const s = `${label}-SECRET-${randomBytes(20).toString("hex")}`;
  secrets.push(s);
  return s;
}

/** A caller whose every response is kept for the leak sweep. */
async function tenant(app: TestApp = gw): Promise<Caller> {
  const c = await caller(app, ["invocations:read_body"]);
  const tracked = Object.assign(
    async (...args: Parameters<Caller>) => {
      const res = await c(...args);
      keep(`${args[0]} ${args[1]}`, res.status, res.headers, res.text);
      return res;
    },
    { tenant: c.tenant, token: c.token },
  ) as Caller;
  tenants.push(tracked);
  return tracked;
}

function keep(what: string, status: number, headers: Headers | Record<string, unknown>, text: string) {
  const h = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  responses.push({ what, status, headers: JSON.stringify(h), text });
}

/** A real upstream that answers a fixed body and keeps each request's raw header list. */
async function upstream(): Promise<Upstream & { raw: string[][] }> {
  const raw: string[][] = [];
  const u = await startUpstream((req, res) => {
    raw.push(req.rawHeaders);
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"upstream":"ok"}');
  });
  upstreams.push(u);
  return Object.assign(u, { raw });
}

/** All values of one header in a raw [name, value, ...] list, whatever the name's case. */
function values(raw: string[] | undefined, name: string): string[] {
  const out: string[] = [];
  for (let i = 0; raw && i < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === name.toLowerCase()) out.push(raw[i + 1] as string);
  }
  return out;
}

async function createCredential(call: Caller, body: Record<string, unknown>): Promise<string> {
  const res = await call("POST", "/v1/credentials", {
    name: `cred-${randomBytes(4).toString("hex")}`,
    ...body,
  });
  expect(res.status, res.text).toBe(201);
  return res.json.id as string;
}

type Mode = "streaming" | "transactional";
const MODES: Mode[] = ["streaming", "transactional"];

type Outcome = {
  /** Status of the first answer: the upstream's (streaming) or 202 (transactional). */
  status: number;
  body: string;
  invocationId: string;
  /** The terminal invocation record (GET /v1/invocations/{id}). */
  record: Res;
  /** The terminal poll answer (transactional only). */
  poll?: Res;
};

/**
 * One call through the gateway in either mode, with raw undici so header names go up exactly as
 * written, and the caller's own bearer token in `Authorization` as a real client sends it.
 */
async function invoke(
  mode: Mode,
  call: Caller,
  agentId: string,
  opts: { body?: string; headers?: Record<string, string>; app?: TestApp } = {},
): Promise<Outcome> {
  const app = opts.app ?? gw;
  const path = mode === "streaming" ? `/v1/proxy/${agentId}/stream` : `/v1/proxy/${agentId}`;
  const res = await request(`${app.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${call.token}`, "content-type": "text/plain", ...opts.headers },
    body: opts.body ?? "hello",
  });
  const body = await res.body.text();
  keep(`POST ${path}`, res.statusCode, res.headers, body);
  const invocationId = res.headers["x-gateway-invocation-id"] as string;
  expect(invocationId, body).toMatch(/^inv_/);
  if (mode === "streaming")
    return { status: res.statusCode, body, invocationId, record: await recordDone(call, invocationId) };
  expect(res.statusCode, body).toBe(202);
  const poll = await pollDone(call, agentId, invocationId);
  expect(poll.status).toBe(200);
  return { status: res.statusCode, body, invocationId, poll, record: await recordDone(call, invocationId) };
}

/** Asserts the call failed closed with credential_error, as the caller of each mode sees it. */
function expectCredentialError(mode: Mode, out: Outcome) {
  if (mode === "streaming") {
    expect(out.status).toBe(502);
    expect(JSON.parse(out.body)).toEqual(CREDENTIAL_ERROR);
  } else {
    expect(out.poll?.json).toMatchObject({ status: "failed", error_class: "credential_error" });
    expect(out.poll?.json.response).toBeUndefined();
  }
  expect(out.record.json).toMatchObject({
    id: out.invocationId,
    status: "failed",
    error_class: "credential_error",
    upstream_status: null,
  });
}

/** The coarse reason the data plane logged for an invocation's credential failure. */
function loggedReason(app: TestApp, invocationId: string): string | undefined {
  for (const line of app.logs.text().split("\n")) {
    if (!line.includes(invocationId) || !line.includes("credential could not be opened")) continue;
    return JSON.parse(line).reason;
  }
  return undefined;
}

/** Runs raw SQL on the gateway's own store; returns the affected or selected rows. */
function sql(app: TestApp, text: string) {
  return app.rt.store.session((exec) => exec(text));
}

const REPO_ROOT = fileURLToPath(new URL("../../..", import.meta.url));
type RewrapReport = { rewrapped: number; unknownKek: string[]; failed: string[]; raced: string[] };

/**
 * Runs the operator's `pnpm --filter @gw/vault rotate-kek` on the test database. It visits every
 * row, but only rows wrapped by `from` (a key this run made up) can change. It exits 1 when other
 * suites' rows are left alone, so the report is read instead of the exit code.
 */
async function rotateKek(from: string, to: string): Promise<RewrapReport> {
  const out = await promisify(execFile)("pnpm", ["--silent", "--filter", "@gw/vault", "rotate-kek"], {
    cwd: REPO_ROOT,
    env: { ...process.env, GW_KMS_KEY_OLD: from, GW_KMS_KEY_NEW: to },
  }).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? "", stderr: e.stderr ?? "" }));
  for (const key of [from, to]) expect(`${out.stdout}${out.stderr}`).not.toContain(key);
  const line = out.stdout.split("\n").find((l) => l.includes("credentials re-wrapped"));
  expect(line, out.stderr).toBeDefined();
  return JSON.parse(line as string);
}

const ID = /^[A-Za-z0-9_-]+$/;
/** Flips the low bit of one byte of a credential's sealed column, straight in the database. */
async function flipByte(call: Caller, credId: string, column: "ciphertext" | "wrapped_key", at: string) {
  expect(credId).toMatch(ID);
  expect(call.tenant).toMatch(ID);
  const rows = await sql(
    gw,
    `update credentials set ${column} = set_byte(${column}, ${at}, get_byte(${column}, ${at}) # 1)
     where tenant_id = '${call.tenant}' and id = '${credId}' returning id`,
  );
  expect(rows).toHaveLength(1);
}

describe("credential injection", () => {
  for (const mode of MODES) {
    it(`${mode}: bearer → exactly "authorization: Bearer <secret>", never the caller's token`, async () => {
      const call = await tenant();
      const u = await upstream();
      const secret = newSecret("bearer");
      const cred = await createCredential(call, { kind: "bearer", secret });
      const agent = await createAgent(call, { upstream_url: u.url, credential_ref: cred });

      const out = await invoke(mode, call, agent, { body: "hello" });
      expect(out.record.json).toMatchObject({ status: "succeeded", upstream_status: 200 });
      if (mode === "streaming") expect(out.body).toBe('{"upstream":"ok"}');
      expect(u.received).toHaveLength(1);
      const raw = u.raw[0];
      expect(values(raw, "authorization")).toEqual([`Bearer ${secret}`]);
      expect(JSON.stringify(raw)).not.toContain(call.token);
      expect(u.received[0]?.body.toString()).toBe("hello");
      expect(values(raw, "x-gateway-tenant-id")).toEqual([call.tenant]);
    });

    it(`${mode}: api_key → exactly "<header_name>: <secret>", replacing a caller header of that name`, async () => {
      const call = await tenant();
      const u = await upstream();
      const secret = newSecret("apikey");
      const cred = await createCredential(call, { kind: "api_key", secret, header_name: "X-Upstream-Key" });
      const agent = await createAgent(call, { upstream_url: u.url, credential_ref: cred });

      const out = await invoke(mode, call, agent, {
        // The same header in another case, twice: neither may reach the upstream beside the secret.
        headers: { "X-UPSTREAM-KEY": "caller-supplied", "x-upstream-key": "caller-again", "x-other": "kept" },
      });
      expect(out.record.json).toMatchObject({ status: "succeeded", upstream_status: 200 });
      const raw = u.raw[0];
      expect(values(raw, "x-upstream-key")).toEqual([secret]);
      expect(values(raw, "authorization")).toEqual([]);
      expect(values(raw, "x-other")).toEqual(["kept"]);
      expect(JSON.stringify(raw)).not.toContain(call.token);
      expect(JSON.stringify(raw)).not.toContain("caller-supplied");
    });

    it(`${mode}: api_key with the default header and with header_name Authorization`, async () => {
      const call = await tenant();
      const u = await upstream();
      const plain = newSecret("default");
      const token = `Token ${newSecret("scheme")}`;
      const a = await createAgent(call, {
        upstream_url: u.url,
        credential_ref: await createCredential(call, { kind: "api_key", secret: plain }),
      });
      const b = await createAgent(call, {
        upstream_url: u.url,
        credential_ref: await createCredential(call, {
          kind: "api_key",
          secret: token,
          header_name: "Authorization",
        }),
      });
      await invoke(mode, call, a, { headers: { "X-Api-Key": "caller-supplied" } });
      await invoke(mode, call, b);
      expect(values(u.raw[0], "x-api-key")).toEqual([plain]);
      expect(values(u.raw[0], "authorization")).toEqual([]);
      // The caller's Authorization is dropped, the credential's takes its place: one value, not two.
      expect(values(u.raw[1], "authorization")).toEqual([token]);
      expect(JSON.stringify(u.raw)).not.toContain(call.token);
    });
  }

  it("a redirect is handed back, never followed: its target never sees the secret", async () => {
    const call = await tenant();
    const target = await upstream();
    const u = await startUpstream((_req, res) => {
      res.writeHead(302, { location: `${target.url}/elsewhere` });
      res.end();
    });
    upstreams.push(u);
    const secret = newSecret("redirect");
    const cred = await createCredential(call, { kind: "bearer", secret });
    const agent = await createAgent(call, { upstream_url: u.url, credential_ref: cred });
    const streamed = await invoke("streaming", call, agent);
    expect(streamed.status).toBe(302);
    const polled = await invoke("transactional", call, agent);
    expect(polled.poll?.json.response.status).toBe(302);
    expect(u.received.map((r) => r.headers.authorization)).toEqual([`Bearer ${secret}`, `Bearer ${secret}`]);
    expect(target.received).toHaveLength(0);
  });

  it("an agent without a credential sends no Authorization at all", async () => {
    const call = await tenant();
    const u = await upstream();
    const agent = await createAgent(call, { upstream_url: u.url });
    for (const mode of MODES) await invoke(mode, call, agent);
    expect(u.raw.map((r) => values(r, "authorization"))).toEqual([[], []]);
    expect(JSON.stringify(u.raw)).not.toContain(call.token);
  });

  it("captured bodies hold the caller's and the upstream's bodies, not the injected header", async () => {
    const call = await tenant();
    const u = await upstream();
    const secret = newSecret("capture");
    const cred = await createCredential(call, { kind: "bearer", secret });
    const agent = await createAgent(call, {
      upstream_url: u.url,
      credential_ref: cred,
      capture_bodies: true,
    });
    for (const mode of MODES) {
      const out = await invoke(mode, call, agent, { body: `body of ${mode}` });
      expect(out.record.json.body_captured).toBe(true);
      expect(Buffer.from(out.record.json.req_body, "base64").toString()).toBe(`body of ${mode}`);
      expect(Buffer.from(out.record.json.resp_body, "base64").toString()).toBe('{"upstream":"ok"}');
    }
    expect(u.raw.map((r) => values(r, "authorization"))).toEqual([
      [`Bearer ${secret}`],
      [`Bearer ${secret}`],
    ]);
  });
});

describe("rotation", () => {
  it("PUT changes what the upstream receives on the very next call, in both modes", async () => {
    const call = await tenant();
    const u = await upstream();
    const first = newSecret("first");
    const cred = await createCredential(call, { kind: "bearer", secret: first });
    const agent = await createAgent(call, { upstream_url: u.url, credential_ref: cred });
    const seen = (i: number, name: string) => values(u.raw[i], name);

    await invoke("streaming", call, agent);
    await invoke("transactional", call, agent);
    expect([seen(0, "authorization"), seen(1, "authorization")]).toEqual([
      [`Bearer ${first}`],
      [`Bearer ${first}`],
    ]);

    const second = newSecret("second");
    const put = await call("PUT", `/v1/credentials/${cred}`, { secret: second });
    expect(put.status).toBe(200);
    expect(put.json.version).toBe(2);
    await invoke("streaming", call, agent);
    await invoke("transactional", call, agent);
    expect([seen(2, "authorization"), seen(3, "authorization")]).toEqual([
      [`Bearer ${second}`],
      [`Bearer ${second}`],
    ]);

    // A rotation may change the kind: the next call carries the new header and no Authorization.
    const third = newSecret("third");
    const put3 = await call("PUT", `/v1/credentials/${cred}`, {
      secret: third,
      kind: "api_key",
      header_name: "X-Rotated-Key",
    });
    expect(put3.json).toMatchObject({ version: 3, kind: "api_key", header_name: "X-Rotated-Key" });
    await invoke("transactional", call, agent);
    await invoke("streaming", call, agent);
    for (const i of [4, 5]) {
      expect(seen(i, "x-rotated-key")).toEqual([third]);
      expect(seen(i, "authorization")).toEqual([]);
    }
  });
});

describe("fail closed: credential_error, the upstream is never called", () => {
  it.runIf(process.env.DATABASE_URL)(
    "a record sealed under one KMS key does not open in a process started with another",
    async () => {
      const call = await tenant();
      const u = await upstream();
      const secret = newSecret("kek");
      const cred = await createCredential(call, { kind: "bearer", secret });
      const agent = await createAgent(call, { upstream_url: u.url, credential_ref: cred });

      const other = await startGateway({ GW_KMS_KEY: KEY_B, GW_LOG_LEVEL: "trace" });
      gateways.push(other);
      for (const mode of MODES) {
        const out = await invoke(mode, call, agent, { app: other });
        expectCredentialError(mode, out);
        expect(loggedReason(other, out.invocationId)).toBe("unknown_kek");
      }
      expect(u.received).toHaveLength(0);

      // The record itself is fine: the process holding key A still opens it.
      await invoke("streaming", call, agent);
      expect(values(u.raw[0], "authorization")).toEqual([`Bearer ${secret}`]);

      // After the documented KEK rotation (rotate-kek A → B) it is the other way round.
      const report = await rotateKek(KEY_A, KEY_B);
      expect(report.rewrapped).toBeGreaterThanOrEqual(1);
      for (const list of [report.unknownKek, report.failed, report.raced]) expect(list).not.toContain(cred);
      for (const mode of MODES) await invoke(mode, call, agent, { app: other });
      expect(u.raw.slice(1).map((r) => values(r, "authorization"))).toEqual([
        [`Bearer ${secret}`],
        [`Bearer ${secret}`],
      ]);
      const stale = await invoke("transactional", call, agent);
      expectCredentialError("transactional", stale);
      expect(loggedReason(gw, stale.invocationId)).toBe("unknown_kek");
      expect(u.received).toHaveLength(3);
    },
  );

  const tampering: Array<[column: "ciphertext" | "wrapped_key", where: string, at: string]> = [
    ["ciphertext", "its sealed body", "length(ciphertext) - 1"],
    ["ciphertext", "its GCM tag", "20"],
    ["ciphertext", "its format byte", "0"],
    ["wrapped_key", "its sealed data key", "length(wrapped_key) - 1"],
    ["wrapped_key", "its nonce", "5"],
  ];
  for (const [column, where, at] of tampering) {
    it(`one flipped bit in ${column} (${where}) fails closed; flipping it back works again`, async () => {
      const call = await tenant();
      const u = await upstream();
      const secret = newSecret(`tamper-${column}`);
      const cred = await createCredential(call, { kind: "api_key", secret, header_name: "X-Key" });
      const agent = await createAgent(call, { upstream_url: u.url, credential_ref: cred });

      await flipByte(call, cred, column, at);
      for (const mode of MODES) {
        const out = await invoke(mode, call, agent);
        expectCredentialError(mode, out);
        expect(loggedReason(gw, out.invocationId)).toBe("decrypt_failed");
      }
      expect(u.received).toHaveLength(0);

      await flipByte(call, cred, column, at);
      await invoke("transactional", call, agent);
      expect(values(u.raw[0], "x-key")).toEqual([secret]);
    });
  }

  it("a kek_id naming another key fails closed without trying this one", async () => {
    const call = await tenant();
    const u = await upstream();
    const cred = await createCredential(call, { kind: "bearer", secret: newSecret("kekid") });
    const agent = await createAgent(call, { upstream_url: u.url, credential_ref: cred });
    expect(cred).toMatch(ID);
    await sql(gw, `update credentials set kek_id = 'kek_0000000000000000' where id = '${cred}'`);
    for (const mode of MODES) {
      const out = await invoke(mode, call, agent);
      expectCredentialError(mode, out);
      expect(loggedReason(gw, out.invocationId)).toBe("unknown_kek");
    }
    expect(u.received).toHaveLength(0);
  });

  it("a credential deleted from under its agent fails closed", async () => {
    const call = await tenant();
    const u = await upstream();
    const cred = await createCredential(call, { kind: "bearer", secret: newSecret("deleted") });
    const agent = await createAgent(call, { upstream_url: u.url, credential_ref: cred });
    // The API refuses to delete a referenced credential (409); the row vanishes underneath instead.
    expect((await call("DELETE", `/v1/credentials/${cred}`)).status).toBe(409);
    expect(cred).toMatch(ID);
    expect(await sql(gw, `delete from credentials where id = '${cred}' returning id`)).toHaveLength(1);

    for (const mode of MODES) {
      const out = await invoke(mode, call, agent);
      expectCredentialError(mode, out);
      expect(loggedReason(gw, out.invocationId)).toBe("not_found");
    }
    expect(u.received).toHaveLength(0);
  });
});

describe("tenant isolation", () => {
  it("tenant B can neither reference nor touch A's credential, and A's secret stays A's", async () => {
    const a = await tenant();
    const b = await tenant();
    const u = await upstream();
    const secretA = newSecret("tenant-a");
    const credA = await createCredential(a, { kind: "bearer", secret: secretA });
    const agentA = await createAgent(a, { upstream_url: u.url, credential_ref: credA });

    const refused = await b("POST", "/v1/agents", { name: "b", upstream_url: u.url, credential_ref: credA });
    expect(refused.status).toBe(400);
    const agentB = await createAgent(b, { upstream_url: u.url });
    expect((await b("PATCH", `/v1/agents/${agentB}`, { credential_ref: credA })).status).toBe(400);

    expect((await b("GET", `/v1/credentials/${credA}`)).status).toBe(404);
    const stolen = newSecret("tenant-b-put");
    expect((await b("PUT", `/v1/credentials/${credA}`, { secret: stolen })).status).toBe(404);
    expect((await b("DELETE", `/v1/credentials/${credA}`)).status).toBe(404);
    expect((await b("GET", "/v1/credentials")).json.total).toBe(0);
    const mine = await a("GET", `/v1/credentials/${credA}`);
    expect(mine.json).toMatchObject({ id: credA, version: 1 });

    // B cannot call A's agent either, on any proxy path.
    for (const path of [`/v1/proxy/${agentA}`, `/v1/proxy/${agentA}/stream`]) {
      expect((await b("POST", path, "x")).status).toBe(404);
    }
    expect(u.received).toHaveLength(0);

    for (const mode of MODES) await invoke(mode, b, agentB);
    const ofA: string[] = [];
    for (const mode of MODES) ofA.push((await invoke(mode, a, agentA)).invocationId);
    expect(u.raw.map((r) => values(r, "authorization"))).toEqual([
      [],
      [],
      [`Bearer ${secretA}`],
      [`Bearer ${secretA}`],
    ]);
    expect(JSON.stringify(u.raw)).not.toContain(stolen);

    // Nor can B read A's invocations, on the control plane or through the poll path.
    for (const inv of ofA) {
      expect((await b("GET", `/v1/invocations/${inv}`)).status).toBe(404);
      expect((await b("GET", `/v1/proxy/${agentA}/invocations/${inv}`)).status).toBe(404);
      expect((await b("GET", `/v1/proxy/${agentB}/invocations/${inv}`)).status).toBe(404);
    }
    const listB = await b("GET", "/v1/invocations?limit=100");
    expect(listB.json.data.map((i: { agent_id: string }) => i.agent_id)).toEqual([agentB, agentB]);
  });

  it("a B agent pointed at A's credential behind the API's back still gets nothing of A's", async () => {
    const a = await tenant();
    const b = await tenant();
    const u = await upstream();
    const credA = await createCredential(a, { kind: "bearer", secret: newSecret("cross-a") });
    const agentB = await createAgent(b, { upstream_url: u.url });
    expect(agentB).toMatch(ID);
    expect(credA).toMatch(ID);
    await sql(gw, `update agents set credential_ref = '${credA}' where id = '${agentB}'`);

    for (const mode of MODES) {
      const out = await invoke(mode, b, agentB);
      expectCredentialError(mode, out);
      expect(loggedReason(gw, out.invocationId)).toBe("not_found");
    }
    expect(u.received).toHaveLength(0);
  });

  it("A's sealed secret copied into B's credential row does not open there", async () => {
    const a = await tenant();
    const b = await tenant();
    const u = await upstream();
    const credA = await createCredential(a, { kind: "bearer", secret: newSecret("moved-a") });
    const credB = await createCredential(b, { kind: "bearer", secret: newSecret("moved-b") });
    const agentB = await createAgent(b, { upstream_url: u.url, credential_ref: credB });
    expect(credA).toMatch(ID);
    expect(credB).toMatch(ID);
    const moved = await sql(
      gw,
      `update credentials set (ciphertext, wrapped_key, kek_id) =
         (select ciphertext, wrapped_key, kek_id from credentials where id = '${credA}')
       where id = '${credB}' returning id`,
    );
    expect(moved).toHaveLength(1);

    for (const mode of MODES) {
      const out = await invoke(mode, b, agentB);
      expectCredentialError(mode, out);
      expect(loggedReason(gw, out.invocationId)).toBe("decrypt_failed");
    }
    expect(u.received).toHaveLength(0);
  });
});

// Runs last: it reads what every test above left behind.
describe("the secret never leaves the server", () => {
  /** The secret as text, and as the hex and base64 a byte column or a captured body would hold. */
  const forms = (s: string) => {
    const b = Buffer.from(s);
    return [s, b.toString("hex"), b.toString("base64").slice(0, Math.floor(b.length / 3) * 4)];
  };
  const leaksIn = (text: string) => secrets.flatMap(forms).filter((f) => text.includes(f));

  it("in no API response, error body, invocation record or log line of the whole run", async () => {
    expect(secrets.length).toBeGreaterThan(10);
    // Read everything each tenant can read once more, bodies included.
    for (const call of [...tenants]) {
      expect((await call("GET", "/v1/credentials?limit=100")).status).toBe(200);
      expect((await call("GET", "/v1/agents?limit=100")).status).toBe(200);
      const list = await call("GET", "/v1/invocations?limit=100");
      expect(list.status, list.text).toBe(200);
      for (const inv of list.json.data) {
        expect((await call("GET", `/v1/invocations/${inv.id}`)).status).toBe(200);
        expect((await call("GET", `/v1/proxy/${inv.agent_id}/invocations/${inv.id}`)).status).toBe(200);
      }
    }
    expect(responses.length).toBeGreaterThan(100);
    for (const r of responses) {
      // Base64 fields (captured bodies, polled results) are searched decoded as well.
      const decoded = [...r.text.matchAll(/"([A-Za-z0-9+/]{16,}={0,2})"/g)].map((m) =>
        Buffer.from(m[1] as string, "base64").toString("latin1"),
      );
      expect(leaksIn(`${r.headers}\n${r.text}\n${decoded.join("\n")}`), r.what).toEqual([]);
    }

    const ids = tenants.map((t) => `'${t.tenant}'`).join(",");
    for (const table of ["invocations", "invocation_results", "agents"]) {
      const rows = await sql(
        gw,
        `select row_to_json(t)::text as j from ${table} t where tenant_id in (${ids})`,
      );
      expect(rows.length, table).toBeGreaterThan(0);
      expect(leaksIn(rows.map((row) => String(row.j)).join("\n")), table).toEqual([]);
    }

    for (const g of gateways) {
      const logs = g.logs.text();
      expect(logs).toContain("credential could not be opened");
      expect(leaksIn(logs)).toEqual([]);
    }
  });
});
