// `pnpm bench:receipts`: what a broken receipt emitter costs a call. Three all-in-one gateways in
// this process (healthy emitter, one whose store throws, one whose store hangs), each with a warn
// policy (so a decision receipt is emitted too), called in interleaved rounds with streaming and
// transactional calls; prints p50/p99 per variant and the ratio to the healthy one. Needs
// DATABASE_URL and REDIS_URL like the main bench.
import { generateKeyPairSync } from "node:crypto";
import { mintDevToken } from "@gw/auth";
import { createGateway } from "@gw/gateway";
import { createReceiptEmitter, loadReceiptKey } from "@gw/receipts";
import type { Runtime } from "@gw/runtime";
import { serveApp, startUpstream, TEST_JWT_SECRET, type TestApp, testEnv } from "@gw/testkit";
import { request } from "undici";
import { storesOrExplain } from "./deploy.ts";
import { percentile } from "./stats.ts";

const CALLS = Number(process.argv[2] ?? 300);
const ROUNDS = 3;
type Variant = "healthy" | "throwing" | "hanging";
const VARIANTS: Variant[] = ["healthy", "throwing", "hanging"];

async function main(): Promise<number> {
  const stores = await storesOrExplain();
  if (!stores) return 1;
  const jwk = JSON.stringify(generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }));
  const env = testEnv({
    DATABASE_URL: stores.databaseUrl,
    REDIS_URL: stores.redisUrl,
    GW_RECEIPT_SIGNING_KEY: jwk,
    GW_RECEIPT_ACTOR: "urn:gw:bench",
    GW_LOG_LEVEL: "error",
    GW_RATE_LIMIT_RPS: "100000",
    GW_RATE_LIMIT_BURST: "100000",
  });
  const upstream = await startUpstream((_req, res, body) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(body);
  });
  const build = (v: Variant) => async (rt: Runtime) => {
    if (v !== "healthy") {
      rt.receipts = createReceiptEmitter({
        key: await loadReceiptKey(jwk),
        actor: "urn:gw:bench",
        logger: rt.logger,
        sink: {
          save: () => {
            if (v === "throwing") throw new Error("receipt store down");
            return new Promise(() => {});
          },
        },
      });
    }
    return createGateway(rt);
  };
  const apps = {} as Record<Variant, TestApp & { token: string; agent: string }>;
  for (const v of VARIANTS) {
    const app = await serveApp(build(v), env, "gateway");
    const tenant = `bench-${v}-${Date.now()}`;
    const token = await mintDevToken(TEST_JWT_SECRET, { tenant, sub: "bench", scopes: [] });
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const created = await request(`${app.url}/v1/agents`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "echo", upstream_url: `${upstream.url}/echo` }),
    });
    const agent = ((await created.body.json()) as { id: string }).id;
    await (
      await request(`${app.url}/v1/policy`, { method: "PUT", headers: auth, body: '{"default":"warn"}' })
    ).body.text();
    apps[v] = Object.assign(app, { token, agent });
  }
  const times: Record<Variant, { stream: number[]; transact: number[] }> = {
    healthy: { stream: [], transact: [] },
    throwing: { stream: [], transact: [] },
    hanging: { stream: [], transact: [] },
  };
  const call = async (v: Variant, mode: "stream" | "transact") => {
    const a = apps[v];
    const t0 = performance.now();
    const res = await request(`${a.url}/v1/proxy/${a.agent}${mode === "stream" ? "/stream" : ""}`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.token}`, "content-type": "application/json" },
      body: '{"prompt":"hello"}',
    });
    await res.body.text();
    if (res.statusCode !== (mode === "stream" ? 200 : 202))
      throw new Error(`${v} ${mode}: ${res.statusCode}`);
    times[v][mode].push(performance.now() - t0);
  };
  for (const v of VARIANTS) for (let i = 0; i < 50; i++) await call(v, "stream"); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (const v of VARIANTS.map((_, i) => VARIANTS[(i + r) % 3] as Variant)) {
      for (let i = 0; i < CALLS / ROUNDS; i++) {
        await call(v, "stream");
        await call(v, "transact");
      }
    }
  }
  const fmt = (x: number) => x.toFixed(2).padStart(7);
  console.log(`\n${CALLS} sequential calls per mode and variant (interleaved rounds), ms`);
  console.log("variant    stream p50  p99     ratio p50 | transact p50  p99     ratio p50");
  for (const v of VARIANTS) {
    const s = times[v].stream;
    const t = times[v].transact;
    const base = times.healthy;
    console.log(
      `${v.padEnd(10)} ${fmt(percentile(s, 50))} ${fmt(percentile(s, 99))}  ${fmt(percentile(s, 50) / percentile(base.stream, 50))}   | ${fmt(percentile(t, 50))} ${fmt(percentile(t, 99))}  ${fmt(percentile(t, 50) / percentile(base.transact, 50))}`,
    );
  }
  for (const v of VARIANTS) await apps[v].close();
  await upstream.close();
  return 0;
}

process.exitCode = await main();
