import { describe, expect, it } from "vitest";
import type { Member } from "./members.ts";
import { endSession, planOlder } from "./older.ts";
import { planRequest } from "./plan.ts";
import { REVISION } from "./protocol.ts";
import { clientRevisionOf, olderCapabilities, shapedFor } from "./revisions.ts";
import { SESSION_LIFETIME_MS, sessionIds } from "./session-id.ts";

const ids = sessionIds(Buffer.alloc(32, 1));
const context = { tenantId: "t1", agentId: "agt_v", sessions: ids };
const sid = ids.issue({ tenantId: "t1", agentId: "agt_v", revision: "2025-06-18" });
const member: Member = {
  agentId: "agt_m",
  prefix: "m",
  include: null,
  exclude: null,
  target: { origin: "http://127.0.0.1:1", host: "127.0.0.1", path: "/mcp" },
  credentialRef: null,
};
const server = { name: "portal", version: "1", members: [member] };
const msg = (method: string, params: Record<string, unknown> = {}, id: number | null = 1) =>
  id === null ? { jsonrpc: "2.0", method, params } : { jsonrpc: "2.0", id, method, params };
const headers = (sessionId: string | null, protocolVersion: string | null = "2025-06-18") => ({
  sessionId,
  protocolVersion,
});

describe("session ids", () => {
  it("verifies what it issued, for its lifetime, and nothing else", () => {
    const now = Date.now();
    const id = ids.issue({ tenantId: "t", agentId: "a", revision: "2025-11-25" }, now);
    expect(id).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(ids.verify(id, now)).toEqual({
      tenantId: "t",
      agentId: "a",
      revision: "2025-11-25",
      issuedAt: now,
    });
    expect(ids.verify(id, now + SESSION_LIFETIME_MS + 1)).toBeNull();
    expect(sessionIds(Buffer.alloc(32, 2)).verify(id, now)).toBeNull();
    const [v, payload, mac] = id.split(".");
    const other = Buffer.from(JSON.stringify(["t2", "a", "2025-11-25", now])).toString("base64url");
    expect(ids.verify(`${v}.${other}.${mac}`, now)).toBeNull();
    expect(ids.verify(`${v}.${payload}.${mac}x`, now)).toBeNull();
    expect(ids.verify("x".repeat(5000), now)).toBeNull();
  });
});

describe("older clients' requests", () => {
  it("answers initialize with the client's revision, or 2025-11-25 for one it does not know", () => {
    expect(
      planOlder(msg("initialize", { protocolVersion: "2025-03-26" }), headers(null, null), context),
    ).toEqual({
      kind: "initialize",
      revision: "2025-03-26",
    });
    expect(clientRevisionOf("2099-01-01")).toBe("2025-11-25");
  });

  it("refuses a missing session (400) and one that is not this agent's (404)", () => {
    expect(planOlder(msg("tools/list"), headers(null), context)).toMatchObject({ answer: { status: 400 } });
    const other = ids.issue({ tenantId: "t1", agentId: "agt_other", revision: "2025-06-18" });
    expect(planOlder(msg("tools/list"), headers(other), context)).toMatchObject({
      answer: { status: 404, message: { error: { code: -32001 } } },
    });
    expect(endSession(other, context).answer.status).toBe(404);
    // An ended session is refused from then on (its own id: `sid` serves the other cases).
    const ending = ids.issue(
      { tenantId: "t1", agentId: "agt_v", revision: "2025-06-18" },
      Date.now() - 60_000,
    );
    expect(planOlder(msg("tools/list"), headers(ending), context)).toMatchObject({ kind: "serve" });
    expect(endSession(ending, context).answer.status).toBe(204);
    expect(planOlder(msg("tools/list"), headers(ending), context)).toMatchObject({ answer: { status: 404 } });
    expect(endSession(ending, context).answer.status).toBe(404);
    expect(endSession(null, context).answer.status).toBe(400);
  });

  it("answers ping and logging/setLevel itself and takes notifications/initialized", () => {
    expect(planOlder(msg("ping"), headers(sid), context)).toMatchObject({
      kind: "own",
      answer: { status: 200 },
    });
    expect(planOlder(msg("logging/setLevel", { level: "info" }), headers(sid), context)).toMatchObject({
      kind: "own",
    });
    expect(planOlder(msg("notifications/initialized", {}, null), headers(sid), context)).toEqual({
      kind: "accepted",
    });
    expect(
      planRequest(server, Buffer.from(JSON.stringify(msg("tools/call", { name: "m__x" }))), {
        ...headers(sid),
        session: context,
      }),
    ).toMatchObject({ kind: "routed", name: "x", client: "2025-06-18" });
  });

  it("leaves a 2026-07-28 request alone, whatever session id it carries", () => {
    const modern = msg("tools/list", { _meta: { "io.modelcontextprotocol/protocolVersion": REVISION } });
    expect(planOlder(modern, headers(sid, REVISION), context)).toBeNull();
  });
});

describe("shapes", () => {
  it("drops 2026-07-28's result fields for older clients and adds resultType for 2026-07-28 ones", () => {
    const message = {
      jsonrpc: "2.0",
      id: 1,
      result: { tools: [], resultType: "complete", ttlMs: 0, cacheScope: "private" },
    };
    expect(shapedFor(message, "2025-06-18")).toEqual({ jsonrpc: "2.0", id: 1, result: { tools: [] } });
    expect(shapedFor({ jsonrpc: "2.0", id: 1, result: { content: [] } }, REVISION).result).toEqual({
      content: [],
      resultType: "complete",
    });
    expect(
      olderCapabilities({ tools: { listChanged: true }, resources: { subscribe: true, listChanged: true } }),
    ).toEqual({
      tools: {},
      resources: { subscribe: true },
    });
  });
});
