// @stores once: opens both stores itself in one pass.
import { randomUUID } from "node:crypto";
import { migrate, openStore, RECORDED, RECORDED_FIELDS, RECORDED_FILTERS, type Store } from "@gw/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInvocationWriter } from "../src/repos/invocation-writer.ts";
import { invocationRepo } from "../src/repos/invocations.ts";
import { pollRow } from "../src/repos/poll.ts";
import { InvocationItem, invocationJson } from "../src/serialize.ts";

// The protocols' recorded fields are declared once (packages/db/src/schema/recorded.ts); the
// migrations must give each its column, and each filterable one its index, or a protocol's new field
// would be written nowhere and filtered by a scan of the tenant's every row (ADR 0042).
const stores: Array<[string, string | undefined]> = [["embedded", undefined]];
if (process.env.DATABASE_URL) stores.push(["postgres", process.env.DATABASE_URL]);

describe("the recorded fields' declaration", () => {
  it("names every field once, snake_case, and every field is in the list item's schema", () => {
    const names = RECORDED_FIELDS.map((f) => f.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
    for (const n of names) expect(Object.keys(InvocationItem.entries)).toContain(n);
    expect(Object.keys(RECORDED).sort()).toEqual(["a2a", "http", "mcp"]);
    // The API's filters (docs/interface.md): exactly these parameters, `method` across protocols.
    expect(RECORDED_FILTERS.map((r) => [r.param, r.fields.map((f) => f.name)])).toEqual([
      ["method", ["mcp_method", "a2a_method"]],
      ["tool", ["mcp_tool"]],
      ["mcp_task_id", ["mcp_task_id"]],
      ["a2a_task_id", ["a2a_task_id"]],
    ]);
  });
});

describe.each(stores)("the recorded fields in the store (%s)", (_name, url) => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore(url);
    await migrate(store);
  });
  afterAll(() => store.close());

  it("has a column per field and an index per filterable field", async () => {
    const cols = await store.query(
      `select column_name, data_type from information_schema.columns
       where table_schema = current_schema() and table_name = 'invocations'`,
      [],
    );
    const types = new Map(cols.map((c) => [String(c.column_name), String(c.data_type)]));
    for (const f of RECORDED_FIELDS) expect(types.get(f.name), f.name).toBe("text");
    const idx = await store.query(
      "select indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename = 'invocations'",
      [],
    );
    const defs = new Map(idx.map((i) => [String(i.indexname), String(i.indexdef)]));
    for (const f of RECORDED_FIELDS.filter((x) => x.filter)) {
      const def = defs.get(`invocations_${f.name}_idx`);
      expect(def, f.name).toContain(`(tenant_id, ${f.name}, created_at)`);
      expect(def, f.name).toContain(`${f.name} IS NOT NULL`);
    }
  });

  it("writes, completes, polls, serializes and filters each field as declared", async () => {
    const tenantId = `t-rec-${randomUUID()}`;
    const writer = createInvocationWriter(store.query);
    const id = `inv_${randomUUID()}`;
    const other = `inv_${randomUUID()}`;
    const row = (inv: string, v: string) => ({
      id: inv,
      agentId: "agt_x",
      mode: "transactional" as const,
      ...Object.fromEntries(RECORDED_FIELDS.map((f) => [f.key, `${f.name}-${v}`])),
    });
    // What the answer taught: only a field not learned from the request alone is written; a field
    // the request gave keeps it.
    const learned = Object.fromEntries(RECORDED_FIELDS.map((f) => [f.key, `${f.name}-answer`]));
    await writer.insert(tenantId, row(id, "req"));
    await writer.insert(tenantId, { ...row(other, "other") });
    await writer.update(tenantId, id, { status: "succeeded", ...learned }, undefined);
    const want = Object.fromEntries(
      RECORDED_FIELDS.map((f) => [f.name, f.from === "answer" ? `${f.name}-answer` : `${f.name}-req`]),
    );
    const polled = await pollRow(store.query, tenantId, id);
    expect(polled && invocationJson(polled.row)).toMatchObject(want);
    const got = await invocationRepo.get(store.db, tenantId, id);
    expect(got && invocationJson(got)).toMatchObject(want);
    // A learned field the request left null is filled by the completion.
    const bare = `inv_${randomUUID()}`;
    await writer.insert(tenantId, { id: bare, agentId: "agt_x", mode: "transactional" });
    await writer.update(tenantId, bare, { status: "succeeded", ...learned }, undefined);
    const filled = await invocationRepo.get(store.db, tenantId, bare);
    expect(filled && invocationJson(filled)).toMatchObject(
      Object.fromEntries(
        RECORDED_FIELDS.map((f) => [f.name, f.from === "request" ? null : `${f.name}-answer`]),
      ),
    );
    for (const r of RECORDED_FILTERS) {
      for (const f of r.fields) {
        const { rows } = await invocationRepo.list(store.db, tenantId, {
          limit: 10,
          offset: 0,
          recorded: { [r.param]: want[f.name] },
        });
        expect(
          rows.map((x) => x.id),
          `${r.param}=${want[f.name]}`,
        ).toEqual([id]);
      }
    }
  });
});
