import { describe, expect, it } from "vitest";
import { decodeWalk, encodeWalk, startWalk } from "./cursor.ts";
import type { Member } from "./members.ts";
import { cacheHints, exposeItems, mergeCapabilities } from "./merge.ts";
import { exposedName, keeps, routeName } from "./names.ts";
import { planRequest } from "./plan.ts";
import { REVISION, versionRefusal } from "./protocol.ts";

const target = {
  origin: "http://127.0.0.1:1",
  host: "127.0.0.1",
  path: "/mcp",
} as unknown as Member["target"];
const member = (agentId: string, prefix: string, more: Partial<Member> = {}): Member => ({
  agentId,
  prefix,
  include: null,
  exclude: null,
  target,
  credentialRef: null,
  ...more,
});
const gh = member("agt_gh", "gh", { include: ["issue_*"], exclude: ["issue_delete"] });
const plain = member("agt_plain", "");
const server = { name: "portal", version: "1", members: [gh, plain] };
const meta = { "io.modelcontextprotocol/protocolVersion": REVISION };
const headers = { protocolVersion: REVISION };
const body = (msg: unknown) => Buffer.from(JSON.stringify(msg));

describe("names", () => {
  it("exposes prefixed names and routes them back, honouring include and exclude", () => {
    expect(exposedName(gh, "issue_create")).toBe("gh__issue_create");
    expect(exposedName(plain, "search")).toBe("search");
    expect(routeName([gh, plain], "gh__issue_create", "tool")).toEqual({ member: gh, name: "issue_create" });
    expect(routeName([gh, plain], "gh__issue_delete", "tool")).toBeNull();
    expect(routeName([gh, plain], "gh__repo_list", "tool")).toBeNull();
    expect(routeName([gh, plain], "search", "tool")).toEqual({ member: plain, name: "search" });
    expect(routeName([gh], "search", "tool")).toBeNull();
    expect(keeps({ include: null, exclude: ["a*"] }, "abc")).toBe(false);
  });
});

describe("cursor", () => {
  it("round-trips a walk and refuses what is not one", () => {
    const walk = startWalk([gh, plain]);
    expect(decodeWalk(encodeWalk(walk), [gh, plain])).toEqual(walk);
    expect(decodeWalk("not-ours", [gh])).toBeNull();
    expect(decodeWalk(Buffer.from("[[1,2]]").toString("base64url"), [gh])).toBeNull();
    // A member that left since is skipped.
    expect(decodeWalk(encodeWalk([{ agentId: "agt_gone", cursor: "x" }]), [gh])).toEqual([]);
  });
});

describe("merge", () => {
  it("renames and filters tools, merges cache hints and capabilities", () => {
    const page = { tools: [{ name: "issue_create" }, { name: "issue_delete" }, { name: "repo" }] };
    expect(exposeItems("tools/list", gh, page)).toEqual([{ name: "gh__issue_create" }]);
    expect(exposeItems("resources/list", gh, { resources: [{ uri: "a://b" }] })).toEqual([{ uri: "a://b" }]);
    expect(
      cacheHints([
        { ttlMs: 50, cacheScope: "public" },
        { ttlMs: 20, cacheScope: "public" },
      ]),
    ).toEqual({
      resultType: "complete",
      ttlMs: 20,
      cacheScope: "public",
    });
    expect(cacheHints([{ ttlMs: 50, cacheScope: "public" }, {}])).toMatchObject({
      ttlMs: 0,
      cacheScope: "private",
    });
    expect(
      mergeCapabilities([{ tools: { listChanged: false } }, { tools: { listChanged: true }, prompts: {} }]),
    ).toEqual({
      tools: { listChanged: true },
      prompts: {},
    });
  });
});

describe("plan", () => {
  it("routes a tools/call with the member's own name and answers the revision's refusals itself", () => {
    const call = planRequest(
      server,
      body({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "gh__issue_create", _meta: meta },
      }),
      headers,
    );
    expect(call.kind).toBe("routed");
    if (call.kind === "routed") expect(JSON.parse(call.body.toString()).params.name).toBe("issue_create");
    const ping = planRequest(
      server,
      body({ jsonrpc: "2.0", id: 2, method: "ping", params: { _meta: meta } }),
      headers,
    );
    expect(ping).toMatchObject({
      kind: "own",
      answer: { status: 404, message: { id: 2, error: { code: -32601 } } },
    });
    // Without a member of empty prefix (which owns every other name), an unknown prefix is unknown.
    const unknown = planRequest(
      { ...server, members: [gh] },
      body({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "zz__x", _meta: meta } }),
      headers,
    );
    expect(unknown).toMatchObject({ kind: "own", answer: { message: { error: { code: -32602 } } } });
    expect(
      planRequest(server, body({ jsonrpc: "2.0", method: "notifications/cancelled" }), headers).kind,
    ).toBe("notify");
  });

  it("refuses older versions with -32022 and a mismatched header with -32020", () => {
    const old = versionRefusal(
      { id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } },
      null,
    );
    expect(old?.message).toMatchObject({
      error: { code: -32022, data: { supported: [REVISION], requested: "2025-06-18" } },
    });
    expect(
      versionRefusal({ id: 1, method: "tools/list", params: { _meta: meta } }, "2025-06-18")?.message,
    ).toMatchObject({
      error: { code: -32020 },
    });
    expect(versionRefusal({ id: 1, method: "tools/list", params: { _meta: meta } }, REVISION)).toBeNull();
  });
});
