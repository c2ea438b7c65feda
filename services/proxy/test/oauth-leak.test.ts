// @stores once: secrets in a process's output and answers.
// OAuth credentials: "secrets and tokens never appear in a response, a log line, a span, an error or a
// receipt: test it by searching the processes' output". The real all-in-one gateway
// (`services/gateway/src/main.ts`, as `pnpm start` runs it) is a child process here, logging at
// trace level and exporting its spans and metrics to a local OTLP/HTTP collector; a real
// authorization server (oauth2-mock-server) issues the tokens, and misbehaving token endpoints
// reflect what they were sent. Everything the gateway says (its whole stdout and stderr, every
// response's headers and body, the receipts, the exported telemetry) is then searched for the client
// secrets, every access token the authorization server issued, and the caller's bearer token.
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { eventually, newTenant, type Res, startUpstream, testEnv, token, type Upstream } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthServer, startAuthServer } from "./oauth-server.ts";

type Kind = "oauth2_client_credentials" | "oauth2_token_exchange";
type Mode = "streaming" | "transactional";
const MODES: Mode[] = ["streaming", "transactional"];

let as: AuthServer;
let upstream: Upstream;
let collector: Server;
/** Every OTLP payload the gateway exported (JSON over HTTP), by path. */
const exported: Array<{ path: string; body: string }> = [];
let gateway: { child: ChildProcess; url: string; stdout: () => string; stderr: () => string };
/** Local token endpoints that misbehave, and a port nothing listens on. */
const misbehaving: Upstream[] = [];

/** Everything the gateway answered: status line, headers, body, and the bodies' decoded base64. */
const answered: string[] = [];
/** The strings that must never come out, with what each one is (for the failure message). */
const needles = new Map<string, string>();

/** The needles found in `text`: what the sweep reports. */
function found(text: string): string[] {
  return [...needles].filter(([needle]) => text.includes(needle)).map(([, what]) => what);
}

/** A token endpoint that answers every request with `answer(what it received)`. */
async function reflector(answer: (seen: string, res: ServerResponse) => void): Promise<string> {
  const u = await startUpstream((req: IncomingMessage, res, body) => {
    // What the gateway sent: its Authorization (decoded, when Basic) and the form.
    const auth = req.headers.authorization ?? "";
    const basic = auth.startsWith("Basic ") ? Buffer.from(auth.slice(6), "base64").toString() : "";
    answer(`${auth} ${basic} ${body.toString("utf8")}`, res);
  });
  misbehaving.push(u);
  return `${u.url}/token`;
}

/** The all-in-one gateway as its own process; resolves once it logs the port it listens on. */
async function spawnGateway(env: Record<string, string | undefined>) {
  const repo = fileURLToPath(new URL("../../../", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", "services/gateway/src/main.ts"], {
    cwd: repo,
    env: { ...process.env, ...(testEnv(env) as Record<string, string>), PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => {
    out += d.toString();
  });
  child.stderr.on("data", (d) => {
    err += d.toString();
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${out}${err}`)), 30_000);
    child.stdout.on("data", () => {
      const m = /"port":(\d+),"store"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", () => reject(new Error(`gateway exited before listening: ${out}${err}`)));
  }).catch((e: unknown) => {
    child.kill("SIGKILL");
    throw e;
  });
  return { child, url: `http://127.0.0.1:${port}`, stdout: () => out, stderr: () => err };
}

/** A request to the gateway; keeps its whole answer (and any base64 body in it, decoded). */
async function send(method: string, path: string, bearer: string, body?: unknown): Promise<Res> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
  let payload: string | undefined;
  if (typeof body === "string") payload = body;
  else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers["content-type"] = "application/json";
  }
  const res = await fetch(`${gateway.url}${path}`, { method, headers, body: payload ?? null });
  const text = await res.text();
  answered.push(`${res.status} ${JSON.stringify([...res.headers])}\n${text}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  answered.push(...decodedBodies(json));
  return { status: res.status, headers: res.headers, text, json };
}

/** The base64 bodies of an answer (poll results, captured bodies), decoded, at any depth. */
function decodedBodies(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(decodedBodies);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) =>
    typeof v === "string" && /(_b64|^req_body|^resp_body)$/.test(k)
      ? [Buffer.from(v, "base64").toString("utf8")]
      : decodedBodies(v),
  );
}

beforeAll(async () => {
  as = await startAuthServer();
  // The upstream checks the token with the authorization server's keys, and echoes what it got in
  // a header (and, on /body, in the body): the gateway must redact the access token from both.
  upstream = await startUpstream(async (req, res) => {
    const auth = req.headers.authorization ?? "";
    const payload = auth.startsWith("Bearer ") ? await as.verify(auth.slice(7)) : null;
    res.writeHead(payload ? 200 : 401, { "content-type": "application/json", "x-seen-authorization": auth });
    const body: Record<string, unknown> = { sub: payload?.sub ?? null };
    if (req.url?.startsWith("/body")) body.seen = auth;
    res.end(JSON.stringify(body));
  });
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      exported.push({ path: req.url ?? "", body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
  gateway = await spawnGateway({
    GW_LOG_LEVEL: "trace",
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    OTEL_SERVICE_NAME: "gw-leak-test",
    GW_RECEIPT_SIGNING_KEY: JSON.stringify(
      generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }),
    ),
    GW_RECEIPT_ACTOR: "urn:gw:leak-test",
  });
});
afterAll(async () => {
  gateway?.child.kill("SIGKILL");
  await as?.close();
  await upstream?.close();
  await Promise.all(misbehaving.map((u) => u.close()));
  collector?.close();
});

describe("the all-in-one gateway process never lets out a secret or a token", () => {
  it("no client secret, issued access token or caller token in its stdout/stderr, responses, receipts or exported spans", async () => {
    const tenant = newTenant();
    const bearer = await token(tenant, "user-1", ["invocations:read_body"]);
    needles.set(bearer, "the caller's bearer token");
    // The sweep finds a needle where one is.
    expect(found(`log line … Bearer ${bearer} …`)).toEqual(["the caller's bearer token"]);

    const closedPort = await startUpstream((_req, res) => res.end());
    const unreachable = `${closedPort.url}/token`;
    await closedPort.close();

    // Each credential with its own client at the AS; the bad ones fail at a token endpoint that
    // answers with (or redirects to) what it was sent: the client secret and the caller's token.
    const cases: Array<{ label: string; kind: Kind; tokenUrl?: string; wrong?: boolean; post?: boolean }> = [
      { label: "client credentials", kind: "oauth2_client_credentials" },
      { label: "client credentials (post)", kind: "oauth2_client_credentials", post: true },
      { label: "token exchange", kind: "oauth2_token_exchange" },
      { label: "refused client", kind: "oauth2_client_credentials", wrong: true },
      { label: "refused exchange client", kind: "oauth2_token_exchange", wrong: true },
      {
        label: "400 quoting the request",
        kind: "oauth2_token_exchange",
        post: true,
        tokenUrl: await reflector((seen, res) =>
          res
            .writeHead(400, { "content-type": "application/json" })
            .end(JSON.stringify({ error: "invalid_request", error_description: seen })),
        ),
      },
      {
        label: "200 that is not JSON and quotes the request",
        kind: "oauth2_token_exchange",
        tokenUrl: await reflector((seen, res) =>
          res.writeHead(200, { "content-type": "application/json" }).end(`${seen} {`),
        ),
      },
      {
        label: "200 whose access_token cannot go in a header",
        kind: "oauth2_client_credentials",
        post: true,
        tokenUrl: await reflector((seen, res) =>
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ access_token: `${seen}\r\nX-Evil: 1`, token_type: "Bearer" })),
        ),
      },
      {
        label: "redirect quoting the request",
        kind: "oauth2_token_exchange",
        post: true,
        tokenUrl: await reflector((seen, res) =>
          res.writeHead(302, { location: `${as.tokenUrl}?echo=${encodeURIComponent(seen)}` }).end(),
        ),
      },
      { label: "unreachable", kind: "oauth2_client_credentials", tokenUrl: unreachable },
    ];

    const outcomes: Array<{ label: string; mode: Mode; status: number; poll?: Res["json"] }> = [];
    const invocations: string[] = [];
    for (const c of cases) {
      const clientId = `leak-${randomBytes(4).toString("hex")}`;
      const secret = `client-SECRET-${randomBytes(16).toString("hex")}`;
      needles.set(secret, `the client secret of "${c.label}"`);
      needles.set(
        Buffer.from(`${clientId}:${secret}`).toString("base64"),
        `the Basic header of "${c.label}"`,
      );
      as.clients.set(clientId, { secret });
      const stored = c.wrong ? `wrong-SECRET-${randomBytes(16).toString("hex")}` : secret;
      needles.set(stored, `the stored client secret of "${c.label}"`);
      const cred = await send("POST", "/v1/credentials", bearer, {
        name: c.label,
        kind: c.kind,
        token_url: c.tokenUrl ?? (c.kind === "oauth2_token_exchange" ? as.exchangeUrl : as.tokenUrl),
        client_id: clientId,
        secret: stored,
        ...(c.post ? { auth_method: "client_secret_post" } : {}),
      });
      expect(cred.status, cred.text).toBe(201);
      for (const mode of MODES) {
        // Transactional results are stored, so that upstream echoes the token in its body too.
        const agent = await send("POST", "/v1/agents", bearer, {
          name: `${c.label} ${mode}`,
          upstream_url: `${upstream.url}/${mode === "transactional" ? "body" : "header"}`,
          credential_ref: cred.json.id,
          capture_bodies: true,
        });
        expect(agent.status, agent.text).toBe(201);
        const agentId = agent.json.id as string;
        const path = mode === "streaming" ? `/v1/proxy/${agentId}/stream` : `/v1/proxy/${agentId}`;
        const res = await send("POST", path, bearer, "hello");
        const id = res.headers.get("x-gateway-invocation-id") ?? "";
        expect(id).toMatch(/^inv_/);
        invocations.push(id);
        if (mode === "streaming") {
          outcomes.push({ label: c.label, mode, status: res.status });
          continue;
        }
        expect(res.status).toBe(202);
        const poll = await eventually(async () => {
          const p = await send("GET", `/v1/proxy/${agentId}/invocations/${id}`, bearer);
          return p.json?.status === "succeeded" || p.json?.status === "failed" ? p : undefined;
        }, 20_000);
        outcomes.push({ label: c.label, mode, status: poll.status, poll: poll.json });
      }
    }

    // The calls went as they should: the good credentials reached the upstream with a valid
    // token (which it echoed back), every bad one failed credential_error before it.
    for (const o of outcomes) {
      const good = ["client credentials", "client credentials (post)", "token exchange"].includes(o.label);
      if (o.mode === "streaming") expect(o.status, `${o.label} ${o.mode}`).toBe(good ? 200 : 502);
      else
        expect(o.poll, `${o.label} ${o.mode}`).toMatchObject(
          good
            ? { status: "succeeded", upstream_status: 200 }
            : { status: "failed", error_class: "credential_error" },
        );
    }
    expect(upstream.received).toHaveLength(6);
    expect(as.issued.length).toBeGreaterThanOrEqual(3);
    for (const t of as.issued) needles.set(t, "an access token the authorization server issued");
    // The echoed token came back redacted: the sweep below is not passing for want of an echo.
    expect(answered.join("\n")).toContain("[REDACTED]");

    // Each invocation's record (with its captured bodies, read once) and its signed receipt, as an
    // auditor reads it: the JWS and its decoded payload.
    for (const id of invocations) {
      const record = await send("GET", `/v1/invocations/${id}`, bearer);
      expect(record.status).toBe(200);
      const receipt = await eventually(async () => {
        const r = await send("GET", `/v1/invocations/${id}/receipt`, bearer);
        return r.json?.attested ? r : undefined;
      }, 10_000);
      const payload = Buffer.from(String(receipt.json.jws).split(".")[1] ?? "", "base64url").toString();
      expect(payload).toContain(id);
      answered.push(payload);
    }

    // Stop the gateway: shutdown flushes the span and metric exporters.
    gateway.child.kill("SIGTERM");
    const [code] = await once(gateway.child, "exit");
    expect(code).toBe(0);
    const logs = `${gateway.stdout()}\n${gateway.stderr()}`;
    const traces = exported.filter((p) => p.path === "/v1/traces").map((p) => p.body);
    const metrics = exported.filter((p) => p.path === "/v1/metrics").map((p) => p.body);

    // What was searched holds what it should: trace-level logs of the failures, and spans of the
    // token requests themselves.
    expect(logs).toContain("credential could not be opened");
    expect(logs).toContain("token_unavailable");
    expect(traces.join("\n")).toContain(`"stringValue":"${as.tokenUrl}"`);
    expect(traces.join("\n")).toContain(`"stringValue":"${as.exchangeUrl}"`);
    expect(metrics.length).toBeGreaterThan(0);

    expect(found(logs), "in the gateway's stdout/stderr").toEqual([]);
    expect(found(answered.join("\n")), "in a response, a record or a receipt").toEqual([]);
    expect(found([...traces, ...metrics].join("\n")), "in the exported spans and metrics").toEqual([]);
  }, 120_000);
});
