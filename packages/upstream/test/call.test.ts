import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import {
  callUpstreamStreaming,
  type OpenAnswer,
  readCapped,
  type UpstreamAnswerOf,
  type UpstreamFailure,
} from "../src/call.ts";
import { targetOf } from "../src/open.ts";

// The one retry loop, against a real local server: both read modes share it.

let server: Server | undefined;
const dispatcher = new Agent();
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

/** A server answering the n-th request (1-based) with `answer(n)`. */
async function serve(answer: (n: number, res: ServerResponse, req: IncomingMessage) => void) {
  let n = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(++n, res, req));
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/x`, count: () => n };
}

const call = (url: string, retryable: boolean) => ({
  dispatcher,
  target: targetOf(url),
  headers: [],
  body: Buffer.from("{}"),
  retry: { retries: 2, baseMs: 1, retryable },
  timeoutMs: 5_000,
});

/** A body read whole, capped at 1 KiB: how a collected call reads its answer (forward's collect.ts). */
const readWhole = (answer: OpenAnswer) => readCapped(answer.body, 1024);
const text = (r: UpstreamAnswerOf<Buffer | null> | UpstreamFailure) =>
  r.kind === "answer" && r.body?.toString();

describe("callUpstreamStreaming, the body read whole", () => {
  it("retries 502/503/504 when retryable and returns the final answer", async () => {
    const up = await serve((n, res) => res.writeHead(n < 3 ? 503 : 200).end(`answer ${n}`));
    const r = await callUpstreamStreaming(call(up.url, true), readWhole);
    expect(r).toMatchObject({ kind: "answer", status: 200, attempts: 3 });
    expect(text(r)).toBe("answer 3");
  });

  it("does not retry a call that is not retryable", async () => {
    const up = await serve((_n, res) => res.writeHead(503).end("busy"));
    const r = await callUpstreamStreaming(call(up.url, false), readWhole);
    expect(r).toMatchObject({ kind: "answer", status: 503, attempts: 1 });
    expect(up.count()).toBe(1);
  });

  it("returns the last retryable answer once the retries are spent", async () => {
    const up = await serve((n, res) => res.writeHead(502).end(`bad ${n}`));
    const r = await callUpstreamStreaming(call(up.url, true), readWhole);
    expect(r).toMatchObject({ kind: "answer", status: 502, attempts: 3 });
    expect(text(r)).toBe("bad 3");
  });

  it("reads no body past the cap", async () => {
    const up = await serve((_n, res) => res.writeHead(200).end(Buffer.alloc(2048)));
    const r = await callUpstreamStreaming(call(up.url, true), readWhole);
    expect(r).toMatchObject({ kind: "answer", status: 200, attempts: 1, body: null });
  });
});

describe("callUpstreamStreaming", () => {
  it("hands the reader only the final answer, its body unread, and returns what the reader made", async () => {
    const up = await serve((n, res) => {
      if (n === 1) return res.writeHead(504).end("gateway timeout");
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n"); // and the stream stays open
    });
    const seen: number[] = [];
    const r = await callUpstreamStreaming(call(up.url, true), async ({ status, body }) => {
      seen.push(status);
      for await (const chunk of body) return (chunk as Buffer).toString(); // stop at the first chunk
      return "";
    });
    expect(seen).toEqual([200]);
    expect(r).toMatchObject({ kind: "answer", status: 200, attempts: 2, body: "data: first\n\n" });
  });

  it("classifies a refused connection as unreachable after the retries", async () => {
    const up = await serve((_n, res) => res.end());
    const url = up.url;
    server?.close();
    server?.closeAllConnections();
    const r = await callUpstreamStreaming(call(url, true), async () => "never");
    expect(r).toEqual({ kind: "failure", failure: "unreachable", attempts: 3 });
  });
  it("ends a call at its deadline as a timeout: before the answer, and while its body is read", async () => {
    const stall = await serve((n, res) => {
      if (n === 1) return; // never answers
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("part of it"); // and never ends
    });
    for (const attempt of [1, 2]) {
      const r = await callUpstreamStreaming({ ...call(stall.url, false), timeoutMs: 300 }, readWhole);
      expect(r, `request ${attempt}`).toMatchObject({ kind: "failure", failure: "timeout", attempts: 1 });
    }
    expect(stall.count()).toBe(2);
  });
});
