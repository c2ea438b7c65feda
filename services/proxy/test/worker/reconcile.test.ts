// @stores once: Redis only: BullMQ's doorbell.
import { loadConfig } from "@gw/config";
import { createRuntime, type Runtime } from "@gw/runtime";
import { client, eventually, newTenant, startUpstream, testEnv, token } from "@gw/testkit";
import { startWorker } from "@gw/worker";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { apiOnly } from "./api-only.ts";

const hasRedis = Boolean(process.env.REDIS_URL);

async function worker(env: Record<string, string>): Promise<Runtime> {
  const rt = await createRuntime(
    loadConfig(testEnv({ ...env, GW_LOG_LEVEL: "silent" }), { defaultPort: 0 }),
    { service: "worker", migrate: false },
  );
  const w = startWorker(rt);
  cleanups.push(async () => {
    await w.stop();
    await rt.close();
  });
  return rt;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

/** The BullMQ queue of a deployment, to look at (and lose) its jobs as Redis would. */
function queueOf(name: string) {
  const connection = new Redis(process.env.REDIS_URL as string, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  cleanups.push(async () => {
    await queue.close();
    connection.disconnect();
  });
  return queue;
}

/** The live job carrying an invocation's call, if any (a job carries the calls accepted together). */
async function jobWith(queue: Queue, inv: string) {
  const jobs = await queue.getJobs(["wait", "active", "delayed"]);
  return jobs.find((j) =>
    (j?.data?.calls as Array<{ invocationId: string }>)?.some((c) => c.invocationId === inv),
  );
}

describe.runIf(hasRedis)("Postgres is the source of truth, Redis the doorbell", () => {
  it("re-enqueues an accepted call whose job Redis lost, and runs it once", async () => {
    const env = { GW_QUEUE_NAME: `rec-${newTenant()}`, GW_RECONCILE_MS: "200" };
    const api = await apiOnly(env);
    cleanups.push(() => api.close());
    const u = await startUpstream((_req, res) => res.end("ran"));
    cleanups.push(() => u.close());
    const call = client(api.url, await token(newTenant()));
    const agent = (await call("POST", "/v1/agents", { name: "a", upstream_url: u.url })).json.id;
    const accepted = await call("POST", `/v1/proxy/${agent}`, "payload");
    expect(accepted.status).toBe(202);
    const inv = accepted.json.invocation_id as string;
    // Redis loses the job (a flush, a restart without persistence).
    const queue = queueOf(env.GW_QUEUE_NAME);
    await eventually(async () => ((await jobWith(queue, inv)) ? true : undefined));
    await queue.obliterate({ force: true });
    expect(await jobWith(queue, inv)).toBeUndefined();

    await worker(env);
    const done = await eventually(async () => {
      const r = await call("GET", `/v1/proxy/${agent}/invocations/${inv}`);
      return r.json.status === "succeeded" ? r : undefined;
    }, 30_000);
    expect(Buffer.from(done.json.response.body_b64, "base64").toString()).toBe("ran");
    expect(u.received).toHaveLength(1);
    expect(u.received[0]?.body.toString()).toBe("payload");
    expect(u.received[0]?.headers["x-gateway-invocation-id"]).toBe(inv);
  });

  it("never runs a call whose caller was answered an error, though its job is still queued", async () => {
    const env = { GW_QUEUE_NAME: `rec-${newTenant()}`, GW_RECONCILE_MS: "200" };
    const api = await apiOnly(env);
    cleanups.push(() => api.close());
    const u = await startUpstream((_req, res) => res.end("ran"));
    cleanups.push(() => u.close());
    const tenant = newTenant();
    const call = client(api.url, await token(tenant));
    const agent = (await call("POST", "/v1/agents", { name: "a", upstream_url: u.url })).json.id;
    const accepted = await call("POST", `/v1/proxy/${agent}`, "payload");
    const inv = accepted.json.invocation_id as string;
    // What the proxy does when its answer to the caller was an error (the store answered too late).
    expect(await api.rt.invocations.failIfOpen({ tenantId: tenant, id: inv, agentId: agent })).toBe(true);

    const queue = queueOf(env.GW_QUEUE_NAME);
    expect(await jobWith(queue, inv)).toBeDefined();
    await worker(env);
    await eventually(async () => ((await jobWith(queue, inv)) ? undefined : true), 15_000);
    // Several reconciler passes later, still nothing ran.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(u.received).toHaveLength(0);
    const rec = await call("GET", `/v1/proxy/${agent}/invocations/${inv}`);
    expect(rec.json).toMatchObject({ status: "failed", error_class: "internal" });
  });

  it("puts ids only in the Redis job, whatever the body, and forwards a 200 KiB body byte for byte", async () => {
    const env = { GW_QUEUE_NAME: `rec-${newTenant()}` };
    const api = await apiOnly(env);
    cleanups.push(() => api.close());
    const u = await startUpstream((_req, res, body) => res.end(String(body.length)));
    cleanups.push(() => u.close());
    const call = client(api.url, await token(newTenant()));
    const agent = (await call("POST", "/v1/agents", { name: "a", upstream_url: u.url })).json.id;
    const big = Buffer.alloc(200 * 1024, 7);
    big.write("head", 0);
    const small = await call("POST", `/v1/proxy/${agent}`, "tiny");
    const large = await call("POST", `/v1/proxy/${agent}`, new Uint8Array(big));
    expect(large.status).toBe(202);

    const queue = queueOf(env.GW_QUEUE_NAME);
    for (const inv of [small.json.invocation_id, large.json.invocation_id]) {
      const job = await jobWith(queue, inv);
      const calls = (job?.data.calls ?? []) as Array<Record<string, unknown>>;
      const mine = calls.find((c) => c.invocationId === inv);
      expect(mine).toMatchObject({ agentId: agent, invocationId: inv });
      expect(Object.keys(mine ?? {}).sort()).toEqual(["agentId", "invocationId", "tenantId", "traceContext"]);
      expect(JSON.stringify(job?.data)).not.toContain(Buffer.from("tiny").toString("base64"));
    }

    await worker(env);
    await eventually(() => (u.received.length === 2 ? true : undefined), 15_000);
    const got = u.received.find((r) => r.headers["x-gateway-invocation-id"] === large.json.invocation_id);
    expect(got?.body.equals(big)).toBe(true);
  });
});
