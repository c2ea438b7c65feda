// @stores once: the MCP protocol through a virtual server.
import { startUpstream, type TestApp } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, startGateway } from "../helpers.ts";
import { memberAgent, memberPool, rpc, virtualAgent } from "./fixture.ts";

// The merged subscriptions/listen stream of a virtual server re-frames each member's events: an
// event whose data spans several `data:` lines (SSE allows it; pretty-printed JSON uses it) must
// reach the caller as one event with the same data, not as its first line alone.

let gw: TestApp;
let call: Caller;
const pool = memberPool();

beforeAll(async () => {
  gw = await startGateway();
  call = await caller(gw);
});
afterAll(async () => {
  await pool.closeAll();
  await gw?.close();
});

/** The events of an SSE text: each one's data lines joined with LF (comments and other fields skipped). */
function eventsOf(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((block) =>
      block
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""))
        .join("\n"),
    )
    .filter((d) => d !== "");
}

describe("virtual server: the merged listen stream", () => {
  it("keeps a member's multi-line event one event with all its data, and acknowledges once though the member's stream ends", async () => {
    const note = { jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { why: "a\nb" } };
    const member = await startUpstream((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const ack = { jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged", params: {} };
      res.write(`event: message\r\ndata: ${JSON.stringify(ack)}\r\n\r\n`);
      // The notification pretty-printed: one data line per JSON line, CRLF line ends.
      const lines = JSON.stringify(note, null, 2).split("\n");
      res.end(`event: message\r\n${lines.map((l) => `data: ${l}\r\n`).join("")}\r\n`);
    });
    pool.add(member);
    const m = await memberAgent(call, `${member.url}/mcp`);
    const v = await virtualAgent(call, [{ agent_id: m, prefix: "m" }]);
    const req = rpc("subscriptions/listen", { notifications: { toolsListChanged: true } }, 7);
    const res = await fetch(`${gw.url}/v1/proxy/${v}/stream`, {
      method: "POST",
      headers: { ...req.headers, authorization: `Bearer ${call.token}` },
      body: JSON.stringify(req.body),
    });
    expect(res.status).toBe(200);
    const events = eventsOf(await res.text()).map((d) => JSON.parse(d));
    expect(events.map((e) => e.method)).toEqual([
      "notifications/subscriptions/acknowledged",
      "notifications/tools/list_changed",
    ]);
    expect(events[1]).toEqual(note);
  });
});
