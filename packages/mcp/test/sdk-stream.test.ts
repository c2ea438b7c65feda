import { collectJsonRpcFromSse, isEventStream } from "@gw/jsonrpc";
import { type McpUpstream, mcpInitialize, startMcpUpstream } from "@gw/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { parseMcpRequest } from "../src/parse.ts";

// The collector against what the official SDK server really writes: its SSE framing, its
// priming events and a notification sent on the request's stream ahead of the result.

let upstream: McpUpstream | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

const enc = new TextEncoder();
const dec = new TextDecoder();

async function post(url: string, message: unknown, headers: Record<string, string> = {}) {
  const body = enc.encode(JSON.stringify(message));
  const parsed = parseMcpRequest(body); // what the gateway does before forwarding
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body,
  });
  return { res, parsed };
}

/** Collects the response; `seen` receives the raw stream text read up to it. */
async function collect(
  res: Response,
  id: string | number | null,
  seen: string[] = [],
): Promise<Record<string, unknown>> {
  const body = res.body;
  if (!body || id === null) throw new Error("expected a streamed answer to a request");
  async function* tee() {
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      seen.push(dec.decode(chunk));
      yield chunk;
    }
  }
  return JSON.parse(dec.decode(await collectJsonRpcFromSse(tee(), id, { maxBytes: 1 << 20 })));
}

describe("collectJsonRpcFromSse on the SDK server's streams", () => {
  it("collects initialize, tools/list and a tools/call preceded by a notification", async () => {
    upstream = await startMcpUpstream();
    const { res: initRes, parsed: init } = await post(upstream.url, mcpInitialize("init-1"));
    expect(isEventStream(initRes.headers.get("content-type"))).toBe(true);
    const session = initRes.headers.get("mcp-session-id") ?? "";
    expect(session).not.toBe("");
    const initResult = await collect(initRes, init.id);
    expect(initResult).toMatchObject({ id: "init-1", result: { protocolVersion: "2025-06-18" } });

    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    const { res: notified } = await post(
      upstream.url,
      { jsonrpc: "2.0", method: "notifications/initialized" },
      headers,
    );
    expect(notified.status).toBe(202);

    const { res: listRes, parsed: list } = await post(
      upstream.url,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      headers,
    );
    const listed = await collect(listRes, list.id);
    expect((listed.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name).sort()).toEqual([
      "add",
      "ask_model",
      "ask_user",
      "echo",
      "log_echo",
    ]);

    const { res: callRes, parsed: call } = await post(
      upstream.url,
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "log_echo", arguments: { text: "hi" } },
      },
      headers,
    );
    expect(call.tool).toBe("log_echo");
    const seen: string[] = [];
    expect(await collect(callRes, call.id, seen)).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { content: [{ type: "text", text: "hi" }] },
    });
    const raw = seen.join("");
    expect(raw.indexOf("notifications/message")).toBeGreaterThan(-1);
    expect(raw.indexOf("notifications/message")).toBeLessThan(raw.indexOf('"result"'));
  });
});
