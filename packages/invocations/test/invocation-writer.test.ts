// @stores once: opens both stores itself in one pass.
import { migrate, openStore, type Store } from "@gw/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClaimer } from "../src/repos/invocation-states.ts";
import { createInvocationWriter } from "../src/repos/invocation-writer.ts";
import type { NewInvocation } from "../src/repos/invocations.ts";
import { createRequestWriter } from "../src/repos/reliability.ts";

// Both stores: the embedded one always, Postgres when DATABASE_URL names one, opened as the data
// plane opens it (records on their own pool, `syncRecords: false`) and written through that pool.
const stores: Array<[string, string | undefined]> = [["embedded", undefined]];
if (process.env.DATABASE_URL) stores.push(["postgres", process.env.DATABASE_URL]);

describe.each(stores)("invocation writer (%s store)", (_name, url) => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore(url, { syncRecords: false });
    await migrate(store);
  });
  afterAll(() => store?.close());

  it("inserts every column of a batch as given (the JSON row set maps each field to its column)", async () => {
    const tenantId = `t-writer-${Date.now()}`;
    const agentId = `agt_w${Date.now()}`;
    const created = new Date("2026-11-20T10:00:00.123Z");
    const full: NewInvocation = {
      id: `inv_w1_${Date.now()}`,
      agentId,
      mode: "streaming",
      status: "succeeded",
      model: "m-1",
      mcpMethod: "tools/call",
      mcpTool: "search",
      reqSize: 29,
      startedAt: created,
      policyAction: "warn",
      policyMatchedRule: "2",
      paymentNetwork: "eip155:84532",
      paymentAsset: "0xasset",
      paymentAmount: "1000",
      paymentPayer: "0xpayer",
      paymentNonce: `0xnonce${Date.now()}`,
      settlement: { status: "settled", tx_hash: "0xabc" },
      settlementStatus: "settled",
      instanceId: "inst-1",
      errorClass: null,
      upstreamStatus: 200,
      latencyMs: 12,
      ttftMs: 3,
      respSize: 46,
      completedAt: new Date("2026-11-20T10:00:00.135Z"),
      bodyCaptured: true,
      reqBody: Buffer.from([0, 1, 2, 255]),
      respBody: Buffer.from('{"ok":"quote \\" and \\\\ and ünïcode"}'),
      createdAt: created,
    };
    const bare: NewInvocation = { id: `inv_w2_${Date.now()}`, agentId, mode: "transactional" };
    const writer = createInvocationWriter(store.recordsQuery);
    await Promise.all([writer.insert(tenantId, full), writer.insert(tenantId, bare)]);
    // Again and again: a prepared statement must take its parameter the same way as the first time.
    for (let i = 0; i < 5; i++)
      await writer.insert(tenantId, { id: `inv_w3_${i}_${Date.now()}`, agentId, mode: "streaming" });

    const rows = await store.query("select * from invocations where tenant_id = $1 order by id", [tenantId]);
    expect(rows).toHaveLength(7);
    const [a, b] = rows as Array<Record<string, unknown>>;
    expect(a).toMatchObject({
      id: full.id,
      tenant_id: tenantId,
      agent_id: agentId,
      mode: "streaming",
      status: "succeeded",
      model: "m-1",
      mcp_method: "tools/call",
      mcp_tool: "search",
      policy_action: "warn",
      policy_matched_rule: "2",
      payment_network: "eip155:84532",
      payment_asset: "0xasset",
      payment_amount: "1000",
      payment_payer: "0xpayer",
      payment_nonce: full.paymentNonce,
      settlement: { status: "settled", tx_hash: "0xabc" },
      settlement_status: "settled",
      instance_id: "inst-1",
      error_class: null,
      upstream_status: 200,
      body_captured: true,
    });
    expect(Number(a?.req_size)).toBe(29);
    expect(Number(a?.latency_ms)).toBe(12);
    expect(Number(a?.ttft_ms)).toBe(3);
    expect(Number(a?.resp_size)).toBe(46);
    expect(new Date(a?.created_at as string).toISOString()).toBe(created.toISOString());
    expect(new Date(a?.started_at as string).toISOString()).toBe(created.toISOString());
    expect(new Date(a?.completed_at as string).toISOString()).toBe("2026-11-20T10:00:00.135Z");
    expect(Buffer.from(a?.req_body as Uint8Array)).toEqual(full.reqBody);
    expect(Buffer.from(a?.resp_body as Uint8Array)).toEqual(full.respBody);
    // Defaults where nothing was given.
    expect(b).toMatchObject({ status: "pending", body_captured: false, req_body: null, settlement: null });
    expect(b?.created_at).not.toBeNull();
  });

  it("completes a batch: every column set, unset ones kept, the result stored with it", async () => {
    const tenantId = `t-writer-u-${Date.now()}`;
    const agentId = `agt_wu${Date.now()}`;
    const writer = createInvocationWriter(store.recordsQuery);
    const id = `inv_wu1_${Date.now()}`;
    const other = `inv_wu2_${Date.now()}`;
    await writer.insert(tenantId, { id, agentId, mode: "transactional", model: "kept" });
    await writer.insert(tenantId, { id: other, agentId, mode: "transactional" });
    for (let i = 0; i < 5; i++) await writer.update(tenantId, other, { attempts: i }, undefined);
    const done = new Date("2026-11-20T11:00:00.250Z");
    await Promise.all([
      writer.update(
        tenantId,
        id,
        {
          status: "succeeded",
          upstreamStatus: 201,
          latencyMs: 40,
          ttftMs: 5,
          reqSize: 1,
          respSize: 2,
          attempts: 2,
          startedAt: done,
          completedAt: done,
          bodyCaptured: true,
          reqBody: Buffer.from("a"),
          respBody: Buffer.from([0, 255]),
          settlement: { status: "settled" },
          settlementStatus: "settled",
          receiptArtifactId: "rcpt_1",
        },
        {
          status: 201,
          contentType: "application/json",
          headers: { "mcp-session-id": "s-1" },
          body: Buffer.from('{"a":"\\u0000 is text here"}'),
          expiresAt: new Date("2026-11-21T11:00:00.000Z"),
        },
      ),
      writer.update(tenantId, other, { status: "failed", errorClass: "timeout" }, undefined),
    ]);
    const rows = (await store.query("select * from invocations where tenant_id = $1 order by id", [
      tenantId,
    ])) as Array<Record<string, unknown>>;
    expect(rows[0]).toMatchObject({
      status: "succeeded",
      model: "kept",
      upstream_status: 201,
      attempts: 2,
      body_captured: true,
      settlement: { status: "settled" },
      settlement_status: "settled",
      receipt_artifact_id: "rcpt_1",
      error_class: null,
    });
    expect(Number(rows[0]?.latency_ms)).toBe(40);
    expect(new Date(rows[0]?.completed_at as string).toISOString()).toBe(done.toISOString());
    expect(Buffer.from(rows[0]?.resp_body as Uint8Array)).toEqual(Buffer.from([0, 255]));
    expect(rows[1]).toMatchObject({ status: "failed", error_class: "timeout", completed_at: null });
    const results = (await store.query("select * from invocation_results where tenant_id = $1", [
      tenantId,
    ])) as Array<Record<string, unknown>>;
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      invocation_id: id,
      status: 201,
      content_type: "application/json",
      headers: { "mcp-session-id": "s-1" },
    });
    expect(Buffer.from(results[0]?.body as Uint8Array).toString()).toBe('{"a":"\\u0000 is text here"}');
    expect(new Date(results[0]?.expires_at as string).toISOString()).toBe("2026-11-21T11:00:00.000Z");
  });

  it("writes a record after the fact: the outcome given with the row wins over the row's values", async () => {
    const tenantId = `t-writer-s-${Date.now()}`;
    const writer = createInvocationWriter(store.recordsQuery);
    const id = `inv_ws_${Date.now()}`;
    await writer.insert(
      tenantId,
      { id, agentId: "agt_s", mode: "streaming", status: "running", model: "m", reqSize: 3 },
      { status: "failed", errorClass: "cancelled", respSize: 9, ttftMs: null, respBody: Buffer.from("r") },
    );
    const [row] = (await store.query("select * from invocations where tenant_id = $1", [tenantId])) as Array<
      Record<string, unknown>
    >;
    expect(row).toMatchObject({ status: "failed", error_class: "cancelled", model: "m", ttft_ms: null });
    expect(Number(row?.req_size)).toBe(3);
    expect(Number(row?.resp_size)).toBe(9);
    expect(Buffer.from(row?.resp_body as Uint8Array).toString()).toBe("r");
  });
  it("claims each pending row once, in batches, whatever the concurrency (a duplicate in a batch loses)", async () => {
    const tenantId = `t-claim-${Date.now()}`;
    const agentId = `agt_c${Date.now()}`;
    const writer = createInvocationWriter(store.query);
    const ids = Array.from({ length: 40 }, (_, i) => `inv_c${i}_${Date.now()}`);
    await Promise.all(ids.map((id) => writer.insert(tenantId, { id, agentId, mode: "transactional" })));
    await store.query("update invocations set status = 'succeeded' where tenant_id = $1 and id = $2", [
      tenantId,
      ids[0],
    ]);
    const claim = createClaimer(store.recordsQuery, { maxInFlight: 1, maxBatch: 16 });
    // Every id claimed twice at once, plus one of another tenant: each pending row is won once.
    // The other tenant's claim of ids[1] goes first in its batch: it must still not win it.
    const [stranger, ...results] = await Promise.all([
      claim("t-someone-else", ids[1] as string),
      ...ids.flatMap((id) => [claim(tenantId, id), claim(tenantId, id)]),
    ]);
    expect(stranger).toBe(false);
    expect(results.filter(Boolean)).toHaveLength(ids.length - 1);
    expect([results[0], results[1]]).toEqual([false, false]);
    const rows = await store.query(
      "select status, attempts, started_at from invocations where tenant_id = $1 and id <> $2",
      [tenantId, ids[0]],
    );
    expect(rows).toHaveLength(ids.length - 1);
    // The claim is a HOT update: `status` (indexed) stays pending, `started_at` says it runs.
    for (const r of rows) expect(r).toMatchObject({ status: "pending", attempts: 1 });
    for (const r of rows) expect(r.started_at).not.toBeNull();
    // Claimed rows are not claimed again.
    expect(await claim(tenantId, ids[2] as string)).toBe(false);
  });
  it("answers a claim with the call's stored request (job and body), nothing for a row not pending", async () => {
    const tenantId = `t-claimreq-${Date.now()}`;
    const withRequest = createRequestWriter(store.query);
    const id = `inv_cr_${Date.now()}`;
    const body = Buffer.from([0, 1, 2, 255]);
    const job = { invocationId: id, tenantId, upstreamUrl: "https://up.example/x", headers: ["a", "b"] };
    await withRequest(tenantId, { id, agentId: "agt_cr", mode: "transactional" }, { queue: "q", job, body });
    const claim = createClaimer(store.recordsQuery);
    // Two claims at once (each may go out alone, on its own connection): one wins.
    const both = await Promise.all([claim(tenantId, id), claim(tenantId, id)]);
    expect(both.filter((c) => c === false)).toHaveLength(1);
    expect(both.find((c) => c !== false)).toEqual({ job, body });
    expect(await claim(tenantId, id)).toBe(false);
  });
});
