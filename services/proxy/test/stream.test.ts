// @stores once: the streaming relay; records are covered by records.test.ts.
import { createHash, randomBytes } from "node:crypto";
import { lookup } from "node:dns/promises";
import { connect } from "node:net";
import { hostname } from "node:os";
import { eventually, TEST_CA_FILE, type TestApp } from "@gw/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, recordDone, startGateway, upstreamPool } from "./helpers.ts";

let gw: TestApp;
let call: Caller;
const { up, closeAll } = upstreamPool();

beforeAll(async () => {
  gw = await startGateway({
    GW_UPSTREAM_CA_FILE: TEST_CA_FILE,
    GW_STREAM_FIRST_BYTE_TIMEOUT_MS: "500",
    GW_STREAM_IDLE_TIMEOUT_MS: "500",
    GW_CONNECT_TIMEOUT_MS: "1000",
  });
  call = await caller(gw, ["invocations:read_body"]);
});
afterAll(async () => {
  await gw?.close();
  await closeAll();
});

/** A streaming call with the raw undici client, so the test sees bytes as they arrive. */
function stream(
  agentId: string,
  body: Buffer | string | AsyncIterable<Buffer> = "",
  headers: Record<string, string> = {},
) {
  return request(`${gw.url}/v1/proxy/${agentId}/stream`, {
    method: "POST",
    headers: { authorization: `Bearer ${call.token}`, ...headers },
    body: body as Buffer,
  });
}

describe("streaming proxy", () => {
  it("relays status, headers and body verbatim over HTTPS trusted through the test CA", async () => {
    const u = await up(
      (_req, res, body) => {
        res.writeHead(201, {
          "content-type": "application/x-custom",
          "x-upstream": "yes",
          "set-cookie": ["a=1", "b=2"],
        });
        res.end(Buffer.concat([Buffer.from("echo:"), body]));
      },
      { tls: true },
    );
    const agent = await createAgent(call, { upstream_url: `${u.url}/run?x=1` });
    const res = await stream(agent, "hello", { "content-type": "text/plain", "x-caller": "c1" });
    expect(res.statusCode).toBe(201);
    const invId = res.headers["x-gateway-invocation-id"] as string;
    expect(invId).toMatch(/^inv_/);
    expect(res.headers["content-type"]).toBe("application/x-custom");
    expect(res.headers["x-upstream"]).toBe("yes");
    expect(res.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(await res.body.text()).toBe("echo:hello");

    const seen = u.received[0];
    expect(seen?.url).toBe("/run?x=1");
    expect(seen?.headers["x-caller"]).toBe("c1");
    expect(seen?.headers.authorization).toBeUndefined();
    expect(seen?.headers["x-gateway-invocation-id"]).toBe(invId);
    expect(seen?.headers["x-gateway-agent-id"]).toBe(agent);
    expect(seen?.headers["x-gateway-tenant-id"]).toBe(call.tenant);

    const rec = await recordDone(call, invId);
    expect(rec.json).toMatchObject({
      id: invId,
      agent_id: agent,
      mode: "streaming",
      status: "succeeded",
      error_class: null,
      upstream_status: 201,
      req_size: 5,
      resp_size: 10,
      body_captured: false,
    });
    expect(rec.json.ttft_ms).toBeGreaterThanOrEqual(0);
    expect(rec.json.latency_ms).toBeGreaterThanOrEqual(rec.json.ttft_ms);
  });

  it("never lets the caller spoof gateway headers or pass its payment header upstream", async () => {
    const u = await up((_req, res) => res.end("ok"));
    const agent = await createAgent(call, { upstream_url: u.url });
    const res = await stream(agent, "x", {
      "x-gateway-tenant-id": "someone-else",
      "x-gateway-invocation-id": "inv_forged",
      "x-payment": "c2VjcmV0",
      "x-gateway-model": "gpt-test",
    });
    await res.body.text();
    const h = u.received[0]?.headers ?? {};
    expect(h["x-gateway-tenant-id"]).toBe(call.tenant);
    expect(h["x-gateway-invocation-id"]).toBe(res.headers["x-gateway-invocation-id"]);
    expect(h["x-payment"]).toBeUndefined();
    expect(h["x-gateway-model"]).toBeUndefined();
    const rec = await recordDone(call, res.headers["x-gateway-invocation-id"] as string);
    expect(rec.json.model).toBe("gpt-test");
  });

  it("delivers each SSE event before the upstream sends the next one", async () => {
    // The upstream sends event n+1 only after the test has seen event n arrive through the
    // gateway: a gateway that buffered would deadlock here and the test would time out.
    let release: (() => void) | undefined;
    const u = await up(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (let i = 1; i <= 5; i++) {
        const next = new Promise<void>((r) => {
          release = r;
        });
        res.write(`id: ${i}\nevent: tick\ndata: {"n":${i}}\n\n`);
        await next;
      }
      res.end();
    });
    const agent = await createAgent(call, { upstream_url: u.url });
    const res = await stream(agent, "{}", { accept: "text/event-stream" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/event-stream");
    const events: string[] = [];
    let buf = "";
    for await (const chunk of res.body) {
      buf += chunk.toString();
      let idx = buf.indexOf("\n\n");
      while (idx >= 0) {
        events.push(buf.slice(0, idx));
        buf = buf.slice(idx + 2);
        release?.();
        idx = buf.indexOf("\n\n");
      }
    }
    expect(events).toEqual([1, 2, 3, 4, 5].map((n) => `id: ${n}\nevent: tick\ndata: {"n":${n}}`));
    const rec = await recordDone(call, res.headers["x-gateway-invocation-id"] as string);
    expect(rec.json.status).toBe("succeeded");
  });

  it("streams 10 MiB up and 10 MiB down byte for byte", async () => {
    const payload = randomBytes(10 * 1024 * 1024);
    const u = await up(
      async (req, res) => {
        const hash = createHash("sha256");
        let size = 0;
        for await (const c of req) {
          hash.update(c as Buffer);
          size += (c as Buffer).length;
        }
        res.writeHead(200, { "x-received-sha256": hash.digest("hex"), "x-received-size": String(size) });
        // Send it back in uneven chunks.
        for (let off = 0; off < payload.length; off += 65_537) {
          if (!res.write(payload.subarray(off, off + 65_537))) await new Promise((r) => res.once("drain", r));
        }
        res.end();
      },
      { streamBody: true },
    );
    const agent = await createAgent(call, { upstream_url: u.url });
    async function* chunks() {
      for (let off = 0; off < payload.length; off += 100_003) yield payload.subarray(off, off + 100_003);
    }
    const res = await stream(agent, chunks());
    const down = Buffer.from(await res.body.arrayBuffer());
    const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
    expect(res.headers["x-received-size"]).toBe(String(payload.length));
    expect(res.headers["x-received-sha256"]).toBe(sha(payload));
    expect(down.length).toBe(payload.length);
    expect(sha(down)).toBe(sha(payload));
    const rec = await recordDone(call, res.headers["x-gateway-invocation-id"] as string);
    expect(rec.json).toMatchObject({
      req_size: payload.length,
      resp_size: payload.length,
      status: "succeeded",
    });
  });

  it("holds the upstream back while the caller reads nothing, and delivers every byte once it reads", async () => {
    const total = 64 * 1024 * 1024;
    const piece = Buffer.alloc(64 * 1024, 7);
    let sent = 0;
    let waiting = false;
    const u = await up(async (_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      while (sent < total) {
        sent += piece.length;
        if (!res.write(piece)) {
          waiting = true;
          await new Promise((r) => res.once("drain", r));
          waiting = false;
        }
      }
      res.end();
    });
    const agent = await createAgent(call, { upstream_url: u.url });
    const res = await stream(agent, "x");
    // The caller reads nothing: the upstream comes to a stop (waiting for its socket to drain, no
    // progress over 25 polls), far short of the whole body. A relay that buffered would take it all.
    let last = -1;
    let still = 0;
    await eventually(() => {
      still = waiting && sent === last ? still + 1 : 0;
      last = sent;
      return sent >= total || still >= 25 ? true : undefined;
    });
    expect(sent).toBeLessThan(total / 2);
    let got = 0;
    for await (const c of res.body) got += (c as Buffer).length;
    expect(got).toBe(total);
    const rec = await recordDone(call, res.headers["x-gateway-invocation-id"] as string);
    expect(rec.json).toMatchObject({ resp_size: total, status: "succeeded" });
  });

  it("sends an upload that trickles in piece by piece as it comes, without waiting for its end", async () => {
    const u = await up(
      async (req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.flushHeaders();
        for await (const c of req) res.write(`got:${(c as Buffer).toString()}\n`);
        res.end("end\n");
      },
      { streamBody: true },
    );
    const agent = await createAgent(call, { upstream_url: u.url });
    // The second piece is sent only once the upstream has answered the first: an upload held
    // back until its end would never get there.
    let echoed: () => void = () => {};
    const firstEchoed = new Promise<void>((r) => {
      echoed = r;
    });
    async function* pieces() {
      yield Buffer.from("one");
      await firstEchoed;
      yield Buffer.from("two");
    }
    const res = await stream(agent, pieces());
    let text = "";
    for await (const c of res.body) {
      text += (c as Buffer).toString();
      if (text.includes("got:one")) echoed();
    }
    expect(text).toBe("got:one\ngot:two\nend\n");
    const rec = await recordDone(call, res.headers["x-gateway-invocation-id"] as string);
    expect(rec.json).toMatchObject({ status: "succeeded", req_size: 6 });

    // An empty body, and one that arrived with its headers, go up whole.
    for (const body of ["", "hello"]) {
      const r = await stream(agent, body);
      expect(await r.body.text()).toBe(body ? `got:${body}\nend\n` : "end\n");
      const done = await recordDone(call, r.headers["x-gateway-invocation-id"] as string);
      expect(done.json).toMatchObject({ status: "succeeded", req_size: body.length });
    }
  });

  it("records a caller gone mid-upload as failed and keeps serving", async () => {
    const upstreamSaw = new Promise<string>((resolve) => {
      void up(
        async (req, res) => {
          let got = "";
          req.on("data", (c: Buffer) => {
            got += c.toString();
          });
          req.once("close", () => resolve(got));
          res.writeHead(200);
          res.flushHeaders();
        },
        { streamBody: true },
      ).then((u) => createAgent(call, { upstream_url: u.url }).then(goneMidUpload));
    });
    let invocationId = "";
    async function goneMidUpload(agent: string) {
      const sock = connect(Number(new URL(gw.url).port), "127.0.0.1");
      await new Promise((r) => sock.once("connect", r));
      sock.write(
        `POST /v1/proxy/${agent}/stream HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${call.token}\r\n` +
          "content-length: 100\r\n\r\npart",
      );
      const head = await new Promise<string>((r) => sock.once("data", (d: Buffer) => r(d.toString())));
      invocationId = /x-gateway-invocation-id: (\S+)/i.exec(head)?.[1] ?? "";
      sock.destroy();
    }
    // The upstream got what had come and saw the call end with the caller.
    expect(await upstreamSaw).toBe("part");
    expect(invocationId).toMatch(/^inv_/);
    const rec = await recordDone(call, invocationId);
    expect(rec.json).toMatchObject({ status: "failed", error_class: "cancelled", req_size: 4 });
    const next = await stream(
      await createAgent(call, { upstream_url: (await up((_q, r) => r.end("ok"))).url }),
      "x",
    );
    expect(await next.body.text()).toBe("ok");
  });

  it("passes upstream errors through and records their class", async () => {
    const five = await up((_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end('{"upstream":"broke"}');
    });
    const four = await up((_req, res) => {
      res.writeHead(404);
      res.end("nope");
    });
    for (const [u, status, cls] of [
      [five, 500, "upstream_5xx"],
      [four, 404, "upstream_4xx"],
    ] as const) {
      const agent = await createAgent(call, { upstream_url: u.url });
      const res = await stream(agent, "x");
      expect(res.statusCode).toBe(status);
      await res.body.text();
      const rec = await recordDone(call, res.headers["x-gateway-invocation-id"] as string);
      expect(rec.json).toMatchObject({ status: "failed", error_class: cls, upstream_status: status });
    }
  });

  it("answers 504 for an upstream that hangs and 502 for one that resets or refuses", async () => {
    const hang = await up(() => {});
    const reset = await up((req) => req.socket.destroy());
    const closed = await up((_req, res) => res.end());
    const closedUrl = closed.url;
    await closed.close();
    const cases: Array<[string, number, string, string]> = [
      [hang.url, 504, "upstream timed out", "timeout"],
      [reset.url, 502, "upstream unreachable", "upstream_5xx"],
      [closedUrl, 502, "upstream unreachable", "upstream_5xx"],
    ];
    for (const [url, status, error, cls] of cases) {
      const agent = await createAgent(call, { upstream_url: url });
      const res = await stream(agent, "x");
      expect(res.statusCode, url).toBe(status);
      expect(await res.body.json()).toEqual({ error });
      const invId = res.headers["x-gateway-invocation-id"] as string;
      expect(invId).toMatch(/^inv_/);
      const rec = await recordDone(call, invId);
      expect(rec.json).toMatchObject({
        status: "failed",
        error_class: cls,
        upstream_status: null,
        ttft_ms: null,
      });
    }
  });

  it("returns a redirect as it is and never follows it", async () => {
    const target = await up((_req, res) => res.end("should never be reached"));
    const redirect = await up((_req, res) => {
      res.writeHead(302, { location: `${target.url}/internal` });
      res.end();
    });
    const agent = await createAgent(call, { upstream_url: redirect.url });
    const res = await stream(agent, "x");
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`${target.url}/internal`);
    await res.body.text();
    expect(target.received).toHaveLength(0);
  });

  it("records a client that disconnects mid-stream as cancelled", async () => {
    let closedUpstream = false;
    const u = await up(async (req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      req.socket.once("close", () => {
        closedUpstream = true;
      });
    });
    const agent = await createAgent(call, { upstream_url: u.url });
    const ac = new AbortController();
    const res = await request(`${gw.url}/v1/proxy/${agent}/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${call.token}` },
      body: "x",
      signal: ac.signal,
    });
    const invId = res.headers["x-gateway-invocation-id"] as string;
    for await (const _ of res.body) {
      ac.abort();
      break;
    }
    const rec = await recordDone(call, invId);
    expect(rec.json).toMatchObject({ status: "failed", error_class: "cancelled" });
    await eventually(() => (closedUpstream ? true : undefined));
  });

  it("captures the first bytes of both bodies when the agent asks for it", async () => {
    const u = await up((_req, res, body) => res.end(Buffer.concat([Buffer.from("re:"), body])));
    const agent = await createAgent(call, { upstream_url: u.url, capture_bodies: true });
    const res = await stream(agent, "captured");
    await res.body.text();
    const invId = res.headers["x-gateway-invocation-id"] as string;
    const rec = await recordDone(call, invId);
    expect(rec.json.body_captured).toBe(true);
    expect(Buffer.from(rec.json.req_body, "base64").toString()).toBe("captured");
    expect(Buffer.from(rec.json.resp_body, "base64").toString()).toBe("re:captured");
    // Without the scope the bodies stay hidden, but the flag still tells they exist.
    const plain = await caller(gw, [], call.tenant);
    const hidden = await plain("GET", `/v1/invocations/${invId}`);
    expect(hidden.json.body_captured).toBe(true);
    expect(hidden.json).not.toHaveProperty("req_body");
    expect(hidden.json).not.toHaveProperty("resp_body");
  });
});

describe("dial-time SSRF guard", () => {
  it("refuses a name that resolves to a blocked address when it is dialled", async () => {
    // The machine's own name resolves to loopback here; 127.0.0.0/8 is not exempted in this deployment.
    const name = hostname();
    const addrs = await lookup(name, { all: true }).catch(() => []);
    expect(
      addrs.some((a) => a.address.startsWith("127.")),
      `${name} must resolve to loopback on this machine`,
    ).toBe(true);
    const u = await up((_req, res) => res.end("reached"));
    const strict = await startGateway({ GW_SSRF_ALLOW_CIDRS: "" });
    try {
      const c = await caller(strict);
      const agent = await createAgent(c, { upstream_url: `http://${name}:${u.port}/` });
      const res = await request(`${strict.url}/v1/proxy/${agent}/stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${c.token}` },
        body: "x",
      });
      expect(res.statusCode).toBe(502);
      expect(await res.body.json()).toEqual({ error: "upstream address is not allowed" });
      const rec = await recordDone(c, res.headers["x-gateway-invocation-id"] as string);
      expect(rec.json).toMatchObject({ status: "failed", error_class: "ssrf_blocked" });
      expect(u.received).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });
});
