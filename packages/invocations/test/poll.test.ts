// @stores once: opens both stores itself in one pass.
import { randomUUID } from "node:crypto";
import { migrate, openStore, type Store } from "@gw/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pollInvocation } from "../src/invocations.ts";
import { createInvocationLifecycle, type Lifecycle } from "../src/lifecycle.ts";
import { invocationRepo } from "../src/repos/invocations.ts";
import { invocationJson, pollJson } from "../src/serialize.ts";

// Both stores: the embedded one always, Postgres when DATABASE_URL names one (their drivers return
// bigints, timestamps, jsonb and bytea differently; the poll's own mapping must not care).
const stores: Array<[string, string | undefined]> = [["embedded", undefined]];
if (process.env.DATABASE_URL) stores.push(["postgres", process.env.DATABASE_URL]);

describe.each(stores)("the poll read (%s store)", (_name, url) => {
  let store: Store;
  let life: Lifecycle;
  beforeAll(async () => {
    store = await openStore(url);
    await migrate(store);
    life = createInvocationLifecycle({ store });
  });
  afterAll(() => store.close());

  it("shows every field as the list does, and the kept answer once terminal; 404 for another agent or tenant", async () => {
    const tenantId = `t-poll-${randomUUID()}`;
    const agentId = `agt_${randomUUID()}`;
    const id = `inv_${randomUUID()}`;
    await life.open(
      tenantId,
      {
        id,
        agentId,
        mode: "transactional",
        status: "pending",
        mcpMethod: "tools/call",
        mcpTool: "search",
        paymentNetwork: "base",
        paymentAsset: "USDC",
        paymentAmount: "1000",
        paymentPayer: `0x${"a".repeat(40)}`,
        paymentNonce: `0x${"b".repeat(64)}`,
        policyAction: "warn",
        policyMatchedRule: "r1",
      },
      { durable: true },
    );
    const ref = { tenantId, id, agentId };
    const open = await pollInvocation({ query: store.query, tenantId, agentId, id });
    expect(pollJson(open.row, open.result, { canReadBody: true })).toEqual(
      invocationJson((await invocationRepo.get(store.db, tenantId, id)) as never),
    );
    expect(open.result).toBeUndefined();

    await life.claim(ref);
    const body = Buffer.from([0, 1, 2, 250, 255]);
    await life.complete(
      ref,
      201,
      {
        latencyMs: 12_345_678_901,
        ttftMs: 7,
        reqSize: 3,
        respSize: body.length,
        settlement: { status: "settled", tx_hash: `0x${"c".repeat(64)}`, settled_amount: "1000" },
        settlementStatus: "settled",
      },
      {
        result: {
          status: 201,
          contentType: "application/json",
          headers: { "mcp-session-id": "s-1" },
          body,
          expiresAt: new Date(Date.now() + 60_000),
        },
      },
    );
    const done = await pollInvocation({ query: store.query, tenantId, agentId, id });
    const drizzleRow = await invocationRepo.get(store.db, tenantId, id);
    const json = pollJson(done.row, done.result, { canReadBody: true });
    const { response, ...item } = json;
    expect(item).toEqual(invocationJson(drizzleRow as never));
    expect(item).toMatchObject({ status: "succeeded", latency_ms: 12_345_678_901, upstream_status: 201 });
    expect(item.settlement).toMatchObject({ status: "settled", settled_amount: "1000" });
    expect(response).toEqual({
      status: 201,
      headers: { "content-type": "application/json", "mcp-session-id": "s-1" },
      body_b64: body.toString("base64"),
    });

    await expect(
      pollInvocation({ query: store.query, tenantId, agentId: `agt_${randomUUID()}`, id }),
    ).rejects.toMatchObject({ kind: "not_found" });
    await expect(
      pollInvocation({ query: store.query, tenantId: `t-other-${randomUUID()}`, agentId, id }),
    ).rejects.toMatchObject({ kind: "not_found" });
    await expect(
      pollInvocation({ query: store.query, tenantId, agentId, id: "not-an-id" }),
    ).rejects.toMatchObject({ kind: "not_found" });
  });
});
