// @stores both: the drain flushes held records to the store before exit.
import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { eventually, newTenant, startUpstream, token } from "@gw/testkit";
import { Client, request } from "undici";
import { describe, expect, it } from "vitest";
import { spawnGateway } from "./helpers.ts";

describe("graceful shutdown", () => {
  it("finishes an in-flight stream on SIGTERM, then exits 0", async () => {
    let finishUpstream: (() => void) | undefined;
    const u = await startUpstream(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first;");
      await new Promise<void>((r) => {
        finishUpstream = r;
      });
      res.end("last");
    });
    const { child, url: base, output } = await spawnGateway({});
    try {
      const auth = {
        authorization: `Bearer ${await token(newTenant())}`,
        "content-type": "application/json",
      };
      const created = await request(`${base}/v1/agents`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ name: "slow", upstream_url: u.url }),
      });
      const agent = ((await created.body.json()) as { id: string }).id;

      const res = await request(`${base}/v1/proxy/${agent}/stream`, {
        method: "POST",
        headers: auth,
        body: "x",
      });
      expect(res.statusCode).toBe(200);
      const chunks: string[] = [];
      const reading = (async () => {
        for await (const c of res.body) chunks.push(c.toString());
      })();
      // The stream is open: ask the gateway to stop, then let the upstream finish.
      await new Promise((r) => setTimeout(r, 100));
      child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 200));
      finishUpstream?.();
      await reading;
      expect(chunks.join("")).toBe("first;last");
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      expect(output()).toContain("shutdown complete");
    } finally {
      child.kill("SIGKILL");
      await u.close();
    }
  });
});

describe("graceful shutdown with an MCP client's standalone GET stream open", () => {
  it("closes the stream when draining starts instead of waiting the whole window for it, then exits 0", async () => {
    // An MCP server's GET stream stays open for whatever the server may send; it never ends.
    const u = await startUpstream(async (req, res) => {
      if (req.method !== "GET") {
        res.writeHead(405).end();
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": open\n\n");
    });
    // A drain window far longer than the test may take: only closing the stream lets it exit.
    const { child, url: base, output } = await spawnGateway({ GW_SHUTDOWN_TIMEOUT_MS: "600000" });
    try {
      const auth = { authorization: `Bearer ${await token(newTenant())}` };
      const created = await request(`${base}/v1/agents`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ name: "mcp", upstream_url: u.url, protocol: "mcp" }),
      });
      expect(created.statusCode).toBe(201);
      const agent = ((await created.body.json()) as { id: string }).id;
      const res = await request(`${base}/v1/proxy/${agent}/stream`, {
        method: "GET",
        headers: { ...auth, accept: "text/event-stream" },
      });
      expect(res.statusCode).toBe(200);
      const reading = (async () => {
        for await (const _ of res.body) {
          // the comment the server sent; the stream then stays open
        }
      })().then(
        () => "ended",
        () => "broken",
      );
      child.kill("SIGTERM");
      // The client sees its stream break (it reconnects, to another replica), and the gateway exits.
      expect(await reading).toBe("broken");
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      expect(output()).toContain("shutdown complete");
    } finally {
      child.kill("SIGKILL");
      await u.close();
    }
  });
});

describe("graceful shutdown on keep-alive connections", () => {
  it("calls in flight finish and close their connection, a request that still arrives on one gets a clean 503, the process exits", async () => {
    const held: Array<() => void> = [];
    let allArrived: (() => void) | undefined;
    const arrived = new Promise<void>((r) => {
      allArrived = r;
    });
    // "/early" answers its headers at once and holds the body; "/late" holds its headers too.
    const u = await startUpstream(async (req, res) => {
      const early = req.url === "/early";
      if (early) res.writeHead(200, { "content-type": "text/plain" }).write("first;");
      await new Promise<void>((r) => {
        held.push(r);
        if (held.length === 3) allArrived?.();
      });
      if (!early) res.writeHead(200, { "content-type": "text/plain" });
      res.end("done");
    });
    const { child, url: base, output } = await spawnGateway({});
    // Three keep-alive connections (one undici Client each); requests are pipelined on A and C.
    const [a, b, c] = [
      new Client(base, { pipelining: 2 }),
      new Client(base),
      new Client(base, { pipelining: 2 }),
    ];
    try {
      const auth = { authorization: `Bearer ${await token(newTenant())}` };
      const agentFor = async (path: string) => {
        const res = await b.request({
          method: "POST",
          path: "/v1/agents",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ name: path, upstream_url: `${u.url}${path}` }),
        });
        expect(res.headers.connection).not.toBe("close");
        return ((await res.body.json()) as { id: string }).id;
      };
      const early = await agentFor("/early");
      const late = await agentFor("/late");
      const stream = (client: Client, agent: string) =>
        client.request({ method: "POST", path: `/v1/proxy/${agent}/stream`, headers: auth, body: "x" });

      // In flight on A and C with their headers out; on B with its headers still to come.
      const onA = stream(a, early);
      const onB = stream(b, late);
      const onC = stream(c, early);
      await arrived;
      const [streamA, streamC] = [await onA, await onC];

      child.kill("SIGTERM");
      await eventually(() => (output().includes("shutting down") ? true : undefined));
      // New work on the open connections: a Hono route on A, a direct (hot-path) route on C.
      const laterA = a.request({ method: "GET", path: "/v1/me", headers: auth });
      const laterC = c.request({ method: "GET", path: `/v1/proxy/${early}/stream`, headers: auth });
      // Let both reach the gateway before the calls in flight end.
      await new Promise((r) => setTimeout(r, 200));
      for (const release of held) release();

      for (const res of [streamA, streamC]) expect(await res.body.text()).toBe("first;done");
      const closing = await onB;
      expect(closing.statusCode).toBe(200);
      expect(closing.headers.connection).toBe("close");
      expect(await closing.body.text()).toBe("done");
      for (const later of [await laterA, await laterC]) {
        expect(later.statusCode).toBe(503);
        expect(later.headers.connection).toBe("close");
        expect(await later.body.json()).toEqual({ error: "server is shutting down; retry the request" });
      }
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      expect(output()).toContain("shutdown complete");
    } finally {
      child.kill("SIGKILL");
      await Promise.all([a, b, c].map((x) => x.close().catch(() => {})));
      await u.close();
    }
  });

  it("on raw sockets: a connection whose answer said Connection: close is ended by the server after it (FIN, no reset); an idle keep-alive connection is ended cleanly, and a request sent during the drain gets a clean 503", async () => {
    const held: Array<() => void> = [];
    // "/early" answers its headers at once and holds the body; "/late" holds its headers too.
    const u = await startUpstream(async (req, res) => {
      const early = req.url === "/early";
      if (early) res.writeHead(200, { "content-type": "text/plain" }).write("first;");
      await new Promise<void>((r) => held.push(r));
      if (!early) res.writeHead(200, { "content-type": "text/plain" });
      res.end("done");
    });
    // A drain window far longer than the test: a connection ends only if the server ends it after
    // its answer, not because the window ran out.
    const { child, url: base, output } = await spawnGateway({ GW_SHUTDOWN_TIMEOUT_MS: "300000" });
    const conns: Raw[] = [];
    const endedByServer = (c: Raw) =>
      Promise.race([
        c.closed,
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error("the server left the connection open after its answer")), 10_000),
        ),
      ]);
    try {
      const auth = `Bearer ${await token(newTenant())}`;
      const agentFor = async (path: string) => {
        const res = await request(`${base}/v1/agents`, {
          method: "POST",
          headers: { authorization: auth, "content-type": "application/json" },
          body: JSON.stringify({ name: path, upstream_url: `${u.url}${path}` }),
        });
        return ((await res.body.json()) as { id: string }).id;
      };
      const early = await agentFor("/early");
      const late = await agentFor("/late");
      // Four keep-alive connections, each used once before the drain (their first answers keep
      // them open); then L and E carry a stream each, P begins a request, and I stays idle.
      const [l, e, i, p] = [raw(base), raw(base), raw(base), raw(base)];
      conns.push(l, e, i, p);
      for (const c of [l, e, i, p]) {
        c.send("GET", "/v1/me", auth);
        const first = await c.response();
        expect(first.status).toBe(200);
        expect(first.headers.connection).not.toBe("close");
      }
      l.send("POST", `/v1/proxy/${late}/stream`, auth, "x");
      e.send("POST", `/v1/proxy/${early}/stream`, auth, "x");
      await eventually(() => (held.length === 2 ? true : undefined));
      const streamE = e.response(); // its headers are out: keep-alive was said before the drain
      // P: a request begun before the drain (its first header lines sent), finished during it.
      p.socket.write(`GET /v1/me HTTP/1.1\r\nhost: x\r\n`);

      child.kill("SIGTERM");
      await eventually(() => (output().includes("shutting down") ? true : undefined));
      for (const release of held) release();

      // P: the drain closed the idle connections at its start, not this one, whose request had
      // begun; the rest of the request, sent during the drain, gets a clean 503 with Connection:
      // close, then the server ends the connection.
      expect(p.ended).toBe(false);
      p.socket.write(`authorization: ${auth}\r\ncontent-length: 0\r\n\r\n`);
      const refusedP = await p.response();
      expect(refusedP.status).toBe(503);
      expect(refusedP.headers.connection).toBe("close");
      expect(JSON.parse(refusedP.body)).toEqual({ error: "server is shutting down; retry the request" });

      // L: the answer whose headers were still to come says Connection: close, and the server
      // then ends the connection: a FIN after the whole answer, no reset.
      const answerL = await l.response();
      expect(answerL).toMatchObject({ status: 200, body: "done" });
      expect(answerL.headers.connection).toBe("close");
      // E: said keep-alive before the drain; once its answer is whole, the server ends it too.
      expect(await streamE).toMatchObject({ status: 200, body: "first;done" });
      for (const c of [l, e, p]) {
        await endedByServer(c);
        expect({ ended: c.ended, error: c.error?.code, rest: c.rest() }).toEqual({
          ended: true,
          error: undefined,
          rest: "",
        });
      }

      // I: idle when the drain began. The server may end it at once (a FIN before any request: a
      // client must not send on it, and undici would not), or, while it is still open, a request
      // sent on it is answered a clean 503 with Connection: close and then ended. Never a reset.
      await Promise.race([i.closed, new Promise((r) => setTimeout(r, 1_000))]);
      if (!i.ended) {
        i.send("GET", "/v1/me", auth);
        const refused = await i.response();
        expect(refused.status).toBe(503);
        expect(refused.headers.connection).toBe("close");
        expect(JSON.parse(refused.body)).toEqual({ error: "server is shutting down; retry the request" });
      }
      await endedByServer(i);
      expect({ ended: i.ended, error: i.error?.code, rest: i.rest() }).toEqual({
        ended: true,
        error: undefined,
        rest: "",
      });

      const [code] = await once(child, "exit");
      expect(code).toBe(0);
    } finally {
      for (const c of conns) c.socket.destroy();
      child.kill("SIGKILL");
      await u.close();
    }
  });
});

type RawResponse = { status: number; headers: Record<string, string>; body: string };
type Raw = {
  socket: Socket;
  send: (method: string, path: string, authorization: string, body?: string) => void;
  /** The next whole response on the connection (Content-Length or chunked). */
  response: () => Promise<RawResponse>;
  /** What the server sent that no response took. */
  rest: () => string;
  /** Settles when the connection is closed, however. */
  closed: Promise<void>;
  /** The server ended the connection (a FIN was read). */
  readonly ended: boolean;
  readonly error: NodeJS.ErrnoException | undefined;
};

/**
 * One HTTP/1.1 keep-alive connection on a raw socket: undici hides whether the server ended a
 * connection cleanly (FIN) or reset it (RST); a socket's "end" and "error" events do not.
 */
function raw(base: string): Raw {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  let buf = "";
  let wake: (() => void) | undefined;
  const state = { ended: false, error: undefined as NodeJS.ErrnoException | undefined };
  socket.setEncoding("latin1");
  socket.on("data", (d: string) => {
    buf += d;
    wake?.();
  });
  socket.on("end", () => {
    state.ended = true;
    wake?.();
  });
  socket.on("error", (err) => {
    state.error = err;
    wake?.();
  });
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  socket.once("close", () => wake?.());
  /** A whole response at the start of `buf`, and its length; undefined while incomplete. */
  const parse = (): [RawResponse, number] | undefined => {
    const head = buf.indexOf("\r\n\r\n");
    if (head < 0) return undefined;
    const [statusLine = "", ...lines] = buf.slice(0, head).split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const at = line.indexOf(":");
      headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
    }
    const status = Number(statusLine.split(" ")[1]);
    let at = head + 4;
    if (headers["transfer-encoding"] === "chunked") {
      let body = "";
      for (;;) {
        const eol = buf.indexOf("\r\n", at);
        if (eol < 0) return undefined;
        const size = Number.parseInt(buf.slice(at, eol), 16);
        if (buf.length < eol + 2 + size + 2) return undefined;
        body += buf.slice(eol + 2, eol + 2 + size);
        at = eol + 2 + size + 2;
        if (size === 0) return [{ status, headers, body }, at];
      }
    }
    const length = Number(headers["content-length"] ?? 0);
    if (buf.length < at + length) return undefined;
    return [{ status, headers, body: buf.slice(at, at + length) }, at + length];
  };
  return {
    socket,
    send: (method, path, authorization, body = "") => {
      socket.write(
        `${method} ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nauthorization: ${authorization}\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    },
    response: async () => {
      for (;;) {
        const got = parse();
        if (got) {
          buf = buf.slice(got[1]);
          return got[0];
        }
        if (state.ended || state.error || socket.destroyed) {
          throw new Error(`connection ended before a whole response (${state.error?.code ?? "FIN"}): ${buf}`);
        }
        await new Promise<void>((r) => {
          wake = r;
        });
      }
    },
    rest: () => buf,
    closed,
    get ended() {
      return state.ended;
    },
    get error() {
      return state.error;
    },
  };
}
