import { describe, expect, it } from "vitest";
import { memberIds } from "./member-id.ts";

const ids = memberIds(Buffer.alloc(32, 7));
const claims = {
  kind: "request",
  tenantId: "ten_a",
  agentId: "agt_v",
  member: "agt_m",
  memberSession: "s-1",
  id: 42,
} as const;

describe("member ids", () => {
  it("round-trips what it issued, numbers and strings alike", () => {
    expect(ids.verify("request", ids.issue(claims), "ten_a", "agt_v")).toEqual(claims);
    const task = { ...claims, kind: "task", id: "task-9" } as const;
    expect(ids.verify("task", ids.issue(task), "ten_a", "agt_v")).toEqual(task);
  });

  it("refuses another kind, tenant, agent or key", () => {
    const id = ids.issue(claims);
    expect(ids.verify("task", id, "ten_a", "agt_v")).toBeNull();
    expect(ids.verify("request", id, "ten_b", "agt_v")).toBeNull();
    expect(ids.verify("request", id, "ten_a", "agt_w")).toBeNull();
    expect(memberIds(Buffer.alloc(32, 8)).verify("request", id, "ten_a", "agt_v")).toBeNull();
  });

  it("refuses forgeries and junk without throwing", () => {
    const id = ids.issue(claims);
    const [p, , s] = id.split(".");
    const forged = `gw1.${Buffer.from(JSON.stringify(["r", "ten_a", "agt_v", "agt_x", "", 1])).toString("base64url")}.${s}`;
    for (const bad of [forged, `${id}x`, `${id}.x`, `gw1.${p}`, "gw1..", "", 7, null, {}, "x".repeat(5000)])
      expect(ids.verify("request", bad, "ten_a", "agt_v")).toBeNull();
  });
});
