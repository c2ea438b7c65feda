import { describe, expect, it } from "vitest";
import { memberIds } from "./member-id.ts";
import type { VirtualServer } from "./members.ts";
import { planRequest } from "./plan.ts";
import { capabilitiesOf, openStream, relaysOf } from "./relays.ts";
import { sessionIds } from "./session-id.ts";

const sessions = sessionIds(Buffer.alloc(32, 1));
const members = memberIds(Buffer.alloc(32, 2));
const context = { tenantId: "ten_a", agentId: "agt_v", sessions, members };
const member = {
  agentId: "agt_m",
  prefix: "m",
  target: { host: "h" },
} as unknown as VirtualServer["members"][number];
const server = { name: "v", version: "1", members: [member], discovery: "list" } as unknown as VirtualServer;
const body = (msg: object) => Buffer.from(JSON.stringify(msg));

describe("relayed client capabilities", () => {
  it("are canonical and declared back as the client declared them", () => {
    expect(relaysOf({})).toBe("");
    expect(relaysOf(null)).toBe("");
    expect(relaysOf({ sampling: {}, roots: { listChanged: true }, elicitation: {} })).toBe(
      "elicitation:form;roots;sampling",
    );
    expect(relaysOf({ elicitation: { url: {}, form: {} } })).toBe("elicitation:form+url");
    expect(capabilitiesOf("")).toEqual({});
    expect(capabilitiesOf("elicitation:form;roots;sampling")).toEqual({
      elicitation: {},
      roots: {},
      sampling: {},
    });
    expect(capabilitiesOf("elicitation:form+url")).toEqual({ elicitation: { form: {}, url: {} } });
  });

  it("travel in the signed session id", () => {
    const id = sessions.issue({ tenantId: "t", agentId: "a", revision: "2025-11-25", relays: "sampling" });
    expect(sessions.verify(id)?.relays).toBe("sampling");
  });
});

describe("an older client's answer to a relayed request", () => {
  const sid = sessions.issue({ tenantId: "ten_a", agentId: "agt_v", revision: "2025-11-25" });
  const headers = { protocolVersion: "2025-11-25", sessionId: sid, session: context };
  const issued = members.issue({
    kind: "request",
    tenantId: "ten_a",
    agentId: "agt_v",
    member: "agt_m",
    memberSession: "s1",
    id: 7,
  });

  it("goes to the member with its own id", () => {
    const plan = planRequest(server, body({ jsonrpc: "2.0", id: issued, result: { ok: 1 } }), headers);
    expect(plan).toMatchObject({ kind: "reply", memberSession: "s1", client: "2025-11-25" });
    if (plan.kind !== "reply") throw new Error("not a reply");
    expect(JSON.parse(plan.body.toString())).toEqual({ jsonrpc: "2.0", id: 7, result: { ok: 1 } });
  });

  it("is an unknown session's message when its id is forged or another's", () => {
    const other = members.issue({
      kind: "request",
      tenantId: "ten_b",
      agentId: "agt_v",
      member: "agt_m",
      memberSession: "s1",
      id: 7,
    });
    const gone = members.issue({
      kind: "request",
      tenantId: "ten_a",
      agentId: "agt_v",
      member: "agt_gone",
      memberSession: "s1",
      id: 7,
    });
    for (const id of [other, gone, `${issued}x`, 7, null, "gw1.e30.AAAA"]) {
      const plan = planRequest(server, body({ jsonrpc: "2.0", id, result: {} }), headers);
      expect(plan, String(id)).toMatchObject({ kind: "own", answer: { status: 404 } });
    }
    const foreignSession = sessions.issue({ tenantId: "ten_a", agentId: "agt_w", revision: "2025-11-25" });
    const plan = planRequest(server, body({ jsonrpc: "2.0", id: issued, result: {} }), {
      ...headers,
      sessionId: foreignSession,
    });
    expect(plan).toMatchObject({ kind: "own", answer: { status: 404 } });
  });

  it("opens the GET stream for a session of this agent only", () => {
    expect(openStream(sid, context)).toEqual({ kind: "stream", client: "2025-11-25", relays: "" });
    expect(openStream("v1.a.b", context)).toMatchObject({ kind: "own", answer: { status: 404 } });
    expect(openStream(null, context)).toMatchObject({ kind: "own", answer: { status: 400 } });
  });
});
