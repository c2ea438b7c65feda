// @stores once: Redis only: BullMQ across worker restarts.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadConfig } from "@gw/config";
import { createRuntime, type Runtime } from "@gw/runtime";
import { client, eventually, newTenant, startUpstream, testEnv, token } from "@gw/testkit";
import { startWorker } from "@gw/worker";
import { afterEach, describe, expect, it } from "vitest";
import { apiOnly } from "./api-only.ts";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const hasRedis = Boolean(process.env.REDIS_URL);

async function workerRuntime(env: Record<string, string>): Promise<Runtime> {
  return createRuntime(loadConfig(testEnv({ ...env, GW_LOG_LEVEL: "silent" }), { defaultPort: 0 }), {
    service: "worker",
    migrate: false,
  });
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

describe.runIf(hasRedis)("transactional jobs across worker restarts (BullMQ on Redis)", () => {
  it("keeps a job queued while no worker runs and completes it when one starts", async () => {
    const env = { GW_QUEUE_NAME: `restart-${newTenant()}` };
    const api = await apiOnly(env);
    cleanups.push(() => api.close());
    const u = await startUpstream((_req, res) => res.end("done"));
    cleanups.push(() => u.close());
    const call = client(api.url, await token(newTenant()));
    const agent = (await call("POST", "/v1/agents", { name: "a", upstream_url: u.url })).json.id;
    const accepted = await call("POST", `/v1/proxy/${agent}`, "x");
    expect(accepted.status).toBe(202);
    const inv = accepted.json.invocation_id;
    await new Promise((r) => setTimeout(r, 300));
    expect((await call("GET", `/v1/proxy/${agent}/invocations/${inv}`)).json.status).toBe("pending");
    expect(u.received).toHaveLength(0);

    const rt = await workerRuntime(env);
    const worker = startWorker(rt);
    cleanups.push(async () => {
      await worker.stop();
      await rt.close();
    });
    const done = await eventually(async () => {
      const r = await call("GET", `/v1/proxy/${agent}/invocations/${inv}`);
      return r.json.status === "succeeded" ? r : undefined;
    });
    expect(Buffer.from(done.json.response.body_b64, "base64").toString()).toBe("done");
  });

  // A worker process is killed (SIGKILL) while its upstream call is in flight. Its job's lock
  // expires, BullMQ hands the job to the next worker once, and the processor decides from the
  // invocation row whether the call may be repeated.
  it.each([
    ["an http call is not repeated: recorded as failed", "http", "failed", 1],
    ["an idempotent MCP tools/list is repeated and succeeds", "mcp", "succeeded", 2],
  ] as const)("%s", async (_label, protocol, status, upstreamCalls) => {
    const env = { GW_QUEUE_NAME: `restart-${newTenant()}`, GW_JOB_LOCK_MS: "1000" };
    const api = await apiOnly(env);
    cleanups.push(() => api.close());
    let first = true;
    const u = await startUpstream((_req, res) => {
      if (first) {
        first = false; // hold the first call open until its worker dies
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}');
    });
    cleanups.push(() => u.close());
    const call = client(api.url, await token(newTenant()));
    const agent = (
      await call("POST", "/v1/agents", {
        name: "a",
        upstream_url: u.url,
        protocol,
      })
    ).json.id;

    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "services/worker/src/main.ts"], {
      cwd: REPO,
      env: { ...process.env, ...(testEnv(env) as Record<string, string>), PORT: "0", GW_LOG_LEVEL: "silent" },
      stdio: "ignore",
    });
    cleanups.push(async () => child.kill("SIGKILL"));
    const accepted = await call(
      "POST",
      `/v1/proxy/${agent}`,
      '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      {
        "content-type": "application/json",
      },
    );
    const inv = accepted.json.invocation_id;
    await eventually(() => (u.received.length === 1 ? true : undefined), 30_000);
    expect((await call("GET", `/v1/proxy/${agent}/invocations/${inv}`)).json.status).toBe("running");
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));

    const rt = await workerRuntime(env);
    const worker = startWorker(rt);
    cleanups.push(async () => {
      await worker.stop();
      await rt.close();
    });
    const done = await eventually(async () => {
      const r = await call("GET", `/v1/proxy/${agent}/invocations/${inv}`);
      return r.json.status === "succeeded" || r.json.status === "failed" ? r : undefined;
    }, 30_000);
    expect(done.json.status).toBe(status);
    if (status === "failed") expect(done.json.error_class).toBe("internal");
    expect(u.received).toHaveLength(upstreamCalls);
  });
});
