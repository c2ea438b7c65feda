// @stores both: a stored request is a row claimed by the worker.
import { newId } from "@gw/core";
import type { TestApp } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, pollDone, startGateway, upstreamPool } from "./helpers.ts";

let gw: TestApp;
let call: Caller;
const { up, closeAll } = upstreamPool();

beforeAll(async () => {
  gw = await startGateway();
  call = await caller(gw, ["invocations:read_body"]);
});
afterAll(async () => {
  await gw?.close();
  await closeAll();
});

/**
 * A pending call as an earlier build accepted it: the row and its stored request in that build's
 * shape (unversioned, no `method`), then the doorbell. A new build's worker claims it.
 */
async function pendingInOldShape(
  agentId: string,
  job: (id: string) => Record<string, unknown>,
  body: string,
) {
  const { rt } = gw;
  const id = newId("inv");
  await rt.invocations.open(
    call.tenant,
    { id, agentId, mode: "transactional", status: "pending", createdBy: "user-1", createdAt: new Date() },
    { durable: true, request: { queue: rt.config.GW_QUEUE_NAME, job: job(id), body: Buffer.from(body) } },
  );
  await rt.jobs.queue.enqueue({ tenantId: call.tenant, agentId, invocationId: id });
  return id;
}

/** The stored request exactly as the build before the versioned shape wrote it. */
const oldShape = (agentId: string, upstreamUrl: string) => (invocationId: string) => ({
  invocationId,
  tenantId: call.tenant,
  agentId,
  upstreamUrl,
  credentialRef: null,
  protocol: "http",
  mcpMethod: null,
  mcpRequestId: null,
  captureBodies: false,
  emitReceipts: null,
  headers: ["content-type", "text/plain", "x-caller", "yes"],
  clientAddress: "127.0.0.1",
});

describe("a stored request written by an earlier build, claimed after an upgrade", () => {
  it("a call stored in the first, unversioned shape still runs: its body and headers reach the upstream", async () => {
    const u = await up((_req, res, body) => res.end(`got ${body.toString()}`));
    const agent = await createAgent(call, { upstream_url: u.url });
    const inv = await pendingInOldShape(agent, oldShape(agent, u.url), "old body");
    const done = await pollDone(call, agent, inv);
    expect(done.json.status).toBe("succeeded");
    expect(Buffer.from(done.json.response.body_b64, "base64").toString()).toBe("got old body");
    expect(u.received).toHaveLength(1);
    expect(u.received[0]?.headers["x-caller"]).toBe("yes");
    expect(u.received[0]?.headers["x-gateway-invocation-id"]).toBe(inv);
  });

  it.each([
    ["a stored request that is no call", (_id: string) => ({ protocol: "http" })],
    ["a stored request of a later build's shape", (id: string) => ({ version: 99, invocationId: id })],
  ])("%s ends cleanly, failed/internal, and nothing is sent", async (_label, job) => {
    const u = await up((_req, res) => res.end("never"));
    const agent = await createAgent(call, { upstream_url: u.url });
    const inv = await pendingInOldShape(agent, job, "x");
    const done = await pollDone(call, agent, inv);
    expect(done.json).toMatchObject({ status: "failed", error_class: "internal" });
    expect(u.received).toHaveLength(0);
  });
});
