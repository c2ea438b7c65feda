import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUpstreamDispatcher } from "../src/dispatcher.ts";
import { callOut, operatorDispatcher } from "../src/outbound.ts";
import { ssrfPolicy } from "../src/ssrf.ts";

// The client of the gateway's calls to other services, against a real local server; the path
// picks the server's behaviour.

const CAP = 1024;
const hits: string[] = [];
const seen: Array<{ method: string; contentType: string | undefined; body: string }> = [];

const behaviours: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  "/echo": (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("pong"),
  "/at-cap": (_req, res) => res.writeHead(200).end("x".repeat(CAP)),
  "/over-cap": (_req, res) => res.writeHead(200).end("x".repeat(CAP + 1)),
  "/no-head": () => {},
  "/slow-body": (_req, res) => {
    res.writeHead(200);
    res.write("partial");
  },
  "/redirect": (_req, res) => res.writeHead(302, { location: "/echo" }).end(),
  "/500": (_req, res) => res.writeHead(500).end("y".repeat(200_000)),
};

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      hits.push(req.url ?? "");
      seen.push({
        method: req.method ?? "",
        contentType: req.headers["content-type"],
        body: Buffer.concat(chunks).toString("utf8"),
      });
      (behaviours[req.url ?? ""] ?? ((_q, r: ServerResponse) => r.writeHead(404).end()))(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await allowed.close();
  await guarded.close();
});

// The runtime's SSRF-guarded dispatcher: with loopback allowed (as tests allow it), and as shipped.
const allowed = createUpstreamDispatcher({ policy: ssrfPolicy(["127.0.0.0/8"]), connectTimeoutMs: 2_000 });
const guarded = createUpstreamDispatcher({ policy: ssrfPolicy([]), connectTimeoutMs: 2_000 });

const call = (path: string, more: Partial<Parameters<typeof callOut>[0]> = {}) =>
  callOut({ via: allowed, url: `${base}${path}`, timeoutMs: 5_000, maxBytes: CAP, ...more });

describe("callOut", () => {
  it("sends the method, headers and body, and answers the status, headers and whole body", async () => {
    const got = await call("/echo", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"a":1}',
    });
    expect(got.kind).toBe("answer");
    if (got.kind !== "answer") return;
    expect(got.status).toBe(200);
    expect(got.headers["content-type"]).toBe("text/plain");
    expect(got.body.toString()).toBe("pong");
    expect(seen.at(-1)).toEqual({ method: "POST", contentType: "application/json", body: '{"a":1}' });
  });

  it("reads an answer of exactly the cap, and refuses one byte more", async () => {
    const at = await call("/at-cap");
    expect(at.kind === "answer" && at.body.length).toBe(CAP);
    const over = await call("/over-cap");
    expect(over).toMatchObject({ kind: "too_large", status: 200 });
  });

  it("times out when the head never comes, and when the body stops halfway (one deadline for both)", async () => {
    for (const path of ["/no-head", "/slow-body"]) {
      const got = await call(path, { timeoutMs: 300 });
      expect(got.kind).toBe("failed");
      if (got.kind !== "failed") return;
      expect(got.failure).toBe("timeout");
      expect((got.error as Error).name).toBe("TimeoutError");
    }
  });

  it("follows no redirect: a 3xx is an answer, or dropped when only 2xx is read", async () => {
    const before = hits.length;
    const got = await call("/redirect");
    expect(got).toMatchObject({ kind: "answer", status: 302, headers: { location: "/echo" } });
    const dropped = await call("/redirect", { reads: (s) => s >= 200 && s <= 299 });
    expect(dropped).toMatchObject({ kind: "dropped", status: 302 });
    expect(hits.slice(before)).toEqual(["/redirect", "/redirect"]);
  });

  it("drops the body of a status the caller does not read, however long", async () => {
    const got = await call("/500", { reads: (s) => s === 200 });
    expect(got).toMatchObject({ kind: "dropped", status: 500 });
    // A drop that gives up on the connection leaves the next call its own.
    expect((await call("/echo")).kind).toBe("answer");
  });

  it("refuses a loopback address through the SSRF-guarded dispatcher without dialling it", async () => {
    const before = hits.length;
    const got = await callOut({ via: guarded, url: `${base}/echo`, timeoutMs: 5_000, maxBytes: CAP });
    expect(got).toMatchObject({ kind: "failed", failure: "blocked" });
    expect(hits.length).toBe(before);
  });

  it("says unreachable for a refused connection and for a URL that does not parse", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(
      await callOut({ via: allowed, url: `http://127.0.0.1:${port}/`, timeoutMs: 5_000, maxBytes: CAP }),
    ).toMatchObject({ kind: "failed", failure: "unreachable" });
    expect(await callOut({ via: allowed, url: "not a url", timeoutMs: 5_000, maxBytes: CAP })).toMatchObject({
      kind: "failed",
      failure: "unreachable",
    });
  });

  it("has one operator dispatcher per process, unguarded (an operator's endpoint may be private)", async () => {
    expect(operatorDispatcher()).toBe(operatorDispatcher());
    const got = await callOut({
      via: operatorDispatcher(),
      url: `${base}/echo`,
      timeoutMs: 5_000,
      maxBytes: CAP,
    });
    expect(got.kind === "answer" && got.body.toString()).toBe("pong");
  });
});
