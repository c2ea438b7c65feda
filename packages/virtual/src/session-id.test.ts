import { describe, expect, it } from "vitest";
import { SESSION_LIFETIME_MS, sessionIds } from "./session-id.ts";

const claims = { tenantId: "ten_a", agentId: "agt_v", revision: "2025-11-25" };

describe("session ids", () => {
  it("refuses an ended session from then on; tells listeners only of sessions ended here", () => {
    const ids = sessionIds(Buffer.alloc(32, 3));
    const heard: string[] = [];
    ids.onEnded((id, c) => heard.push(`${c.tenantId}:${id}`));
    const mine = ids.issue(claims);
    const theirs = ids.issue({ ...claims, agentId: "agt_w" });
    const kept = ids.issue({ ...claims, revision: "2025-06-18" });
    ids.end(mine);
    ids.endedElsewhere(theirs);
    expect(ids.verify(mine)).toBeNull();
    expect(ids.verify(theirs)).toBeNull();
    expect(ids.verify(kept)).toMatchObject({ tenantId: "ten_a", revision: "2025-06-18" });
    expect(heard).toEqual([`ten_a:${mine}`]);
    // Ending again, or ending what was never issued, tells nobody.
    ids.end(mine);
    ids.end("v1.forged.id");
    ids.endedElsewhere("junk");
    expect(heard).toHaveLength(1);
  });

  it("forgets an ended session once it would have expired anyway", () => {
    const ids = sessionIds(Buffer.alloc(32, 4));
    const t0 = Date.now();
    const old = ids.issue(claims, t0);
    ids.end(old, t0);
    const later = t0 + SESSION_LIFETIME_MS + 1;
    const fresh = ids.issue(claims, later);
    ids.end(fresh, later);
    // The first id expired: refused for that reason, and no longer held.
    expect(ids.verify(old, later)).toBeNull();
    expect(ids.verify(fresh, later)).toBeNull();
    expect(ids.verify(ids.issue(claims, later + 1), later + 1)).toMatchObject(claims);
  });
});
