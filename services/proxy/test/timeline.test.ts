// @stores both: the 202's timeline is the transactional path's.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { TEST_CA_FILE, type TestApp } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, startGateway, upstreamPool } from "./helpers.ts";

// GW_PROXY_TIMELINE (services/proxy/src/timeline.ts): the bench's record of where a 202's time went.
const file = join(mkdtempSync(join(tmpdir(), "gw-timeline-")), "timeline.jsonl");
let gw: TestApp;
let call: Caller;
const { up, closeAll } = upstreamPool();

beforeAll(async () => {
  gw = await startGateway({ GW_UPSTREAM_CA_FILE: TEST_CA_FILE, GW_PROXY_TIMELINE: file });
  call = await caller(gw);
});
afterAll(async () => {
  await gw?.close();
  await closeAll();
});

const lines = () =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; t: number[] });

describe("the 202's timeline (GW_PROXY_TIMELINE)", () => {
  it("writes each 202's points in order, on the machine's monotonic clock, and nothing for a stream", async () => {
    const u = await up((_req, res) => res.end("{}"), { tls: true });
    const agent = await createAgent(call, { upstream_url: `${u.url}/invoke` });
    const before = Number(process.hrtime.bigint()) / 1e6;
    const res = await call("POST", `/v1/proxy/${agent}`, "{}", { "content-type": "application/json" });
    const after = Number(process.hrtime.bigint()) / 1e6;
    expect(res.status).toBe(202);
    expect((await call("POST", `/v1/proxy/${agent}/stream`, "{}")).status).toBe(200);
    // The proxy writes its lines every 250 ms.
    await sleep(600);
    const written = lines();
    expect(written.map((l) => l.id)).toEqual([res.json.invocation_id]);
    const t = written[0]?.t ?? [];
    // arrived, authenticated, insert, durable, enqueued, answered
    expect(t).toHaveLength(6);
    expect([...t].sort((a, b) => a - b)).toEqual(t);
    expect(t[0]).toBeGreaterThanOrEqual(before);
    expect(t[5]).toBeLessThanOrEqual(after);
  });
});
