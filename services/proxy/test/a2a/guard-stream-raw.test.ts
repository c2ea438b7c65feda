// @stores once: the A2A protocol: answer guardrails on streams.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestApp } from "@gw/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODES, putPolicy } from "../answers/support.ts";
import { type Caller, caller, createAgent, recordDone } from "../helpers.ts";
import { startA2aGateway } from "./helpers.ts";
import { BLOCKED, events, stream, streamMessage } from "./stream-support.ts";

// Answer guardrails on A2A streams against an upstream that writes its SSE by hand (node:http):
// the framing a reader accepts passes byte for byte, and what cannot be judged never reaches the
// caller unjudged (docs/policy.md "Answer guardrails", ADR 0035).

/** A v0.3 artifact update carrying `text`, as one JSON-RPC response to `id`. */
const artifact = (id: unknown, text: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    result: {
      kind: "artifact-update",
      taskId: "t",
      contextId: "c",
      artifact: { artifactId: "a", parts: [{ kind: "text", text }] },
    },
  });

/** One character of every Unicode plane (0 to 16), and a few of plane 0's scripts. */
const PLANES = `é中${Array.from({ length: 16 }, (_, p) => String.fromCodePoint((p + 1) * 0x10000 + 0x41)).join("")}`;

/** What the upstream writes for a request to `/<script>`: chunks, then a clean end (null: the connection breaks). */
const SCRIPTS: Record<string, (id: unknown) => Array<string | Buffer | null>> = {
  // Every framing a reader accepts: CRLF and CR line ends, comments, named events, ids, retry,
  // data that is not JSON, JSON that is not a response, a multi-line JSON response.
  framing: (id) => [
    ": hello\r\n\r\nretry: 1000\r\n",
    "\r\nevent: ping\rdata: not json\r\rid: 4\n",
    `data: {"note": "not a response"}\n\n`,
    `data: ${artifact(id, "fine").replace('"result":', '\n"result":').split("\n").join("\ndata: ")}\r\n\r`,
    `\n: bye\n\n`,
  ],
  cut: (id) => [`data: ${artifact(id, "first")}\n\n`, `data: ${artifact(id, "second").slice(0, 40)}`],
  broken: (id) => [
    `data: ${artifact(id, "first")}\n\n`,
    `data: ${artifact(id, "second").slice(0, 40)}`,
    null,
  ],
  malformed: (id) => [
    `data: ${artifact(id, "first")}\n\n`,
    `data: {"jsonrpc":"2.0","id":1,"result":{"kind":\n\n`,
    `data: ${artifact(id, "third")}\n\n`,
  ],
  huge: (id) => [
    `data: ${artifact(id, "first")}\n\n`,
    `data: ${artifact(id, "x".repeat(8.5 * 1024 * 1024))}\n\n`,
  ],
  // Written three bytes at a time: multi-byte characters split across chunks.
  planes: (id) => {
    const text = `data: ${artifact(id, PLANES)}\n\ndata: ${artifact(id, `${PLANES} bob@example.com ${PLANES}`)}\n\n`;
    const bytes = Buffer.from(text);
    const out: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 3) out.push(bytes.subarray(i, i + 3));
    return out;
  },
};

let gw: TestApp;
let raw: Server;
let base: string;

beforeAll(async () => {
  gw = await startA2aGateway();
  raw = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const id = (JSON.parse(Buffer.concat(chunks).toString() || "{}") as { id?: unknown }).id ?? null;
      const script = SCRIPTS[(req.url ?? "").slice(1)];
      if (!script) return res.writeHead(404).end();
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const chunk of script(id)) {
        if (res.destroyed) return;
        if (chunk === null) return res.socket?.destroy();
        res.write(chunk);
        await new Promise((r) => setImmediate(r));
      }
      res.end();
    });
  });
  await new Promise<void>((r) => raw.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
});
afterAll(async () => {
  raw?.closeAllConnections();
  await new Promise((r) => raw?.close(r));
  await gw?.close();
});

async function agent(script: string, answerRules: unknown[]) {
  const call = await caller(gw, ["invocations:read_body"]);
  if (answerRules.length > 0) await putPolicy(call, { answer_rules: answerRules });
  const agentId = await createAgent(call, {
    upstream_url: `${base}/${script}`,
    protocol: "a2a",
    capture_bodies: true,
  });
  return { call, agentId };
}

const EMAIL = [{ detect: { pii: ["email"] }, action: "redact" }];
const expected = (script: string, id: unknown) => SCRIPTS[script]?.(id).map(String).join("") as string;

/** The bytes a caller got of a relayed answer that may be aborted, and its invocation id. */
async function received(call: Caller, agentId: string, body: string): Promise<{ text: string; id: string }> {
  const res = await request(`${gw.url}/v1/proxy/${agentId}/stream`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${call.token}`,
      "content-type": "application/json",
      accept: "text/event-stream",
    },
    body,
  });
  const chunks: Buffer[] = [];
  try {
    for await (const c of res.body) chunks.push(c as Buffer);
  } catch {
    // The relay aborts the caller's response when the upstream broke off.
  }
  return { text: Buffer.concat(chunks).toString(), id: res.headers["x-gateway-invocation-id"] as string };
}

describe("answer guardrails on hand-written A2A streams", () => {
  it("every framing passes byte for byte: with no rule for the method, and with a rule that finds nothing", async () => {
    for (const rules of [[{ match: { methods: ["GetTask"] }, ...EMAIL[0] }], EMAIL]) {
      const { call, agentId } = await agent("framing", rules);
      const out = await stream(call, agentId, "streaming", streamMessage("hi", 3));
      expect(out.status).toBe(200);
      expect(out.headers?.get("content-type")).toBe("text/event-stream");
      expect(out.text).toBe(expected("framing", 3));
      expect(out.record.answer_action).toBeNull();
    }
  });

  it("an upstream that breaks off mid-event: the caller never gets the partial event; the record says so", async () => {
    const { call, agentId } = await agent("broken", EMAIL);
    const out = await received(call, agentId, streamMessage("hi", 6));
    expect(out.text).toBe(`data: ${artifact(6, "first")}\n\n`);
    const record = (await recordDone(call, out.id)).json;
    expect(record).toMatchObject({
      status: "failed",
      answer_action: "blocked",
      answer_findings: { incomplete: 1 },
    });
  });

  for (const mode of MODES) {
    it(`${mode}: an event cut off by the stream's end is dropped, never sent unjudged, and recorded`, async () => {
      const { call, agentId } = await agent("cut", EMAIL);
      const out = await stream(call, agentId, mode, streamMessage("hi", 5));
      expect(out.text).toBe(`data: ${artifact(5, "first")}\n\n`);
      expect(out.record).toMatchObject({ answer_action: "blocked", answer_findings: { incomplete: 1 } });
    });

    it(`${mode}: malformed JSON in an event blocks the stream there`, async () => {
      const { call, agentId } = await agent("malformed", EMAIL);
      const out = await stream(call, agentId, mode, streamMessage("hi", "q"));
      expect(events(out.text)).toEqual([JSON.parse(artifact("q", "first")), BLOCKED("q")]);
      expect(out.text).not.toContain("third");
      expect(out.record).toMatchObject({ answer_action: "blocked", answer_findings: { unreadable: 1 } });
    });

    it(`${mode}: an event over the per-event bound blocks the stream (fail closed)`, async () => {
      const { call, agentId } = await agent("huge", EMAIL);
      const out = await stream(call, agentId, mode, streamMessage("hi", 8));
      expect(events(out.text)).toEqual([JSON.parse(artifact(8, "first")), BLOCKED(8)]);
      expect(out.record).toMatchObject({ answer_action: "blocked", answer_findings: { too_large: 1 } });
    });

    it(`${mode}: text in every Unicode plane, split across chunks, passes intact and is redacted around`, async () => {
      const { call, agentId } = await agent("planes", EMAIL);
      const out = await stream(call, agentId, mode, streamMessage("hi", 2));
      const all = events(out.text) as Array<{ result: { artifact: { parts: Array<{ text: string }> } } }>;
      expect(all.map((e) => e.result.artifact.parts[0]?.text)).toEqual([
        PLANES,
        `${PLANES} [redacted:email] ${PLANES}`,
      ]);
      // The first event had no finding: byte for byte.
      expect(out.text.startsWith(`data: ${artifact(2, PLANES)}\n\n`)).toBe(true);
      expect(out.record).toMatchObject({ answer_action: "redacted", answer_findings: { email: 1 } });
    });
  }
});
