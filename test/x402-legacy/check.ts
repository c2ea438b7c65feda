/**
 * `pnpm check:x402-legacy`: the legacy v1 client `x402-fetch` 1.2.x pays through the gateway
 * unchanged. It pulls hundreds of MB of wallet libraries, so it is installed into a temporary
 * directory here, never into the workspace, and this check is run by hand (not on every install).
 *
 * In-process: the all-in-one gateway, a local upstream and a local facilitator. Out of process,
 * from the temporary directory: the legacy client, given a fresh test key through its environment.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
// Relative imports: the repository root declares no workspace dependencies of its own.
import {
  client,
  newPayerKey,
  newTenant,
  serveApp,
  startFacilitator,
  startUpstream,
  token,
} from "../../packages/testkit/src/index.ts";
import { createGateway } from "../../services/gateway/src/app.ts";

const run = promisify(execFile);
const dir = await mkdtemp(join(tmpdir(), "x402-legacy-"));
let failed = false;
const fail = (msg: string) => {
  console.error(`x402-fetch legacy check FAILED: ${msg}`);
  failed = true;
};
try {
  console.log(`installing x402-fetch@1.2 into ${dir} (isolated from the workspace)…`);
  await writeFile(
    join(dir, "package.json"),
    JSON.stringify({ name: "x402-legacy-check", private: true, type: "module" }),
  );
  await run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--loglevel=error", "x402-fetch@~1.2.0", "viem@2.57.1"],
    {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  await copyFile(fileURLToPath(new URL("./client.mjs", import.meta.url)), join(dir, "client.mjs"));

  const upstream = await startUpstream((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ answer: "paid content" }));
  });
  const facilitator = await startFacilitator("succeed");
  const gw = await serveApp(createGateway, {}, "gateway");
  try {
    const tenant = newTenant();
    const bearer = await token(tenant);
    const call = client(gw.url, bearer);
    const agent = await call("POST", "/v1/agents", {
      name: "legacy-priced",
      upstream_url: upstream.url,
      price: {
        amount: "1000",
        asset: "USDC",
        network: "base-sepolia",
        pay_to: "0x4444444444444444444444444444444444444444",
      },
    });
    if (agent.status !== 201) throw new Error(`agent create: ${agent.status}`);
    const cfg = await call("PUT", "/v1/settlement/config", { facilitator_url: facilitator.url });
    if (cfg.status !== 200) throw new Error(`settlement config: ${cfg.status}`);
    const { stdout } = await run("node", ["client.mjs"], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? "",
        PAYER_KEY: newPayerKey(),
        BEARER: bearer,
        TARGET_URL: `${gw.url}/v1/proxy/${agent.json.id}/stream`,
      },
    });
    const out = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    if (out.status !== 200) fail(`status ${out.status}: ${out.body}`);
    if (out.body !== JSON.stringify({ answer: "paid content" })) fail("the upstream's answer was changed");
    if (upstream.received.length !== 1) fail(`upstream called ${upstream.received.length} times`);
    if (facilitator.hits !== 1) fail(`facilitator called ${facilitator.hits} times`);
    const receipt = out.paymentResponse
      ? JSON.parse(Buffer.from(out.paymentResponse, "base64").toString())
      : null;
    if (!receipt?.success || receipt.transaction !== facilitator.transactions[0])
      fail("no X-PAYMENT-RESPONSE");
    const sent = upstream.received[0]?.headers ?? {};
    if ("x-payment" in sent) fail("X-PAYMENT reached the upstream");
    if (!failed) console.log("x402-fetch 1.2.x paid through the gateway unchanged: 1 passed, 0 failed");
  } finally {
    await gw.close();
    await upstream.close();
    await facilitator.close();
  }
} catch (e) {
  fail(e instanceof Error ? e.message : String(e));
} finally {
  await rm(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
