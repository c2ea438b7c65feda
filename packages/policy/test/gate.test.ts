// @stores both: the gate reads policies and writes decisions through the store.
import { setTimeout as sleep } from "node:timers/promises";
import { migrate, openStore, type Store } from "@gw/db";
import { newTenant, TEST_DATABASE_URL } from "@gw/fixtures";
import { type ChangeBus, createChangeBus } from "@gw/runtime";
import { createLogger } from "@gw/telemetry";
import { ssrfPolicy } from "@gw/upstream";
import { Agent } from "undici";
import * as v from "valibot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPolicyGate, PolicyDocument, type PolicyInput, putPolicy } from "../src/index.ts";
import { policyRepo } from "../src/repos/policies.ts";

let store: Store;
let bus: ChangeBus;
const dispatcher = new Agent();
beforeAll(async () => {
  store = await openStore(TEST_DATABASE_URL);
  await migrate(store);
  bus = await createChangeBus(store, createLogger({ level: "silent", service: "test" }));
});
afterAll(async () => {
  await bus?.close();
  await store?.close();
  await dispatcher.close();
});

const input = (tenantId: string, mcpTool = "rm"): PolicyInput => ({
  tenantId,
  agentId: "agt_g",
  protocol: "mcp",
  rpcMethod: "tools/call",
  mcpTool,
  model: null,
  bodySize: 10,
  principal: { sub: "u", scopes: [], claims: {} },
  agentName: "a",
  mode: "streaming",
  arguments: undefined,
});
const ssrf = { policy: ssrfPolicy([]), allowHttp: false };
/** A write the way the control plane takes it: stored, then announced on the change bus. */
const put = async (tenantId: string, doc: unknown) => {
  await putPolicy({ ctx: { db: store.db, tenantId, ssrf }, input: v.parse(PolicyDocument, doc) });
  await bus.publish({ kind: "policy", tenantId });
};
const subscribe = (invalidate: (tenantId: string) => void) =>
  bus.subscribe((c) => {
    if (c.kind === "policy") invalidate(c.tenantId);
  });

describe("policy gate", () => {
  it("a tenant without a document: nothing evaluated, nothing recorded", async () => {
    const gate = createPolicyGate({
      db: store.db,
      query: store.query,
      approvalsQuery: store.query,
      dispatcher,
      cacheMs: 60_000,
    });
    const t = newTenant();
    // Not read yet: unknown, so a caller must ask `decide`; once read, known to have none.
    expect(gate.none(t)).toBe(false);
    expect(await gate.decide(input(t))).toBeNull();
    expect(gate.none(t)).toBe(true);
    expect((await policyRepo.listDecisions(store.db, t, { limit: 10, offset: 0 })).total).toBe(0);
    gate.close();
  });

  it("an announced write is effective on the next call, even with a long cache", async () => {
    const seen: string[] = [];
    const gate = createPolicyGate({
      db: store.db,
      query: store.query,
      approvalsQuery: store.query,
      dispatcher,
      cacheMs: 60_000,
      subscribe,
      onDecision: (id) => seen.push(id),
    });
    const t = newTenant();
    expect(await gate.decide(input(t))).toBeNull();
    await put(t, { rules: [{ action: "deny", match: { tools: ["rm"] } }] });
    const denied = await gate.decide(input(t));
    expect(denied).toMatchObject({ action: "deny", matchedRule: "1", reason: "rule 1" });
    expect(gate.none(t)).toBe(false);
    await put(t, { default: "warn", rules: [{ action: "allow", match: { tools: ["ls"] } }] });
    const warned = await gate.decide(input(t));
    expect(warned).toMatchObject({ action: "warn", matchedRule: "" });
    // A deny is written before decide resolves; a warn comes back unwritten, to go with its
    // invocation (or alone when the call is refused before it has one).
    expect(seen).toEqual([denied?.id]);
    expect(warned?.unrecorded).toBeDefined();
    if (warned?.unrecorded) await gate.writeAlone(warned.unrecorded);
    expect(seen).toEqual([denied?.id, warned?.id]);
    const { rows } = await policyRepo.listDecisions(store.db, t, { limit: 10, offset: 0 });
    expect(rows.map((r) => [r.id, r.action, r.matchedRule, r.mcpTool])).toEqual([
      [warned?.id, "warn", "", "rm"],
      [denied?.id, "deny", "1", "rm"],
    ]);
    gate.close();
  });

  it("a write whose announcement was lost is seen once the cache entry expires", async () => {
    const gate = createPolicyGate({
      db: store.db,
      query: store.query,
      approvalsQuery: store.query,
      dispatcher,
      cacheMs: 50,
    });
    const t = newTenant();
    await put(t, { default: "allow" });
    expect((await gate.decide(input(t)))?.action).toBe("allow");
    // Straight to the table: no announcement at all.
    await policyRepo.put(store.db, t, v.parse(PolicyDocument, { default: "deny" }));
    let action: string | undefined;
    for (let i = 0; i < 100 && action !== "deny"; i++) {
      await sleep(20);
      action = (await gate.decide(input(t)))?.action;
    }
    expect(action).toBe("deny");
    gate.close();
  });
});
