/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, `--requirements
 * 2026-07-28`) run twice: against the suite's reference server directly, and through a virtual
 * MCP server of a real gateway whose one member is that reference server with the empty prefix
 * (docs/mcp.md, Conformance). Prints both results; exits non-zero when the virtual server passes
 * fewer checks or scenarios than the reference server does directly.
 *
 * `pnpm --filter @gw/gateway conformance` (embedded store unless DATABASE_URL / REDIS_URL are set);
 * `... conformance <scenario>` runs one scenario through the virtual server only, verbose.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { client, newTenant, serveApp, type TestApp, token } from "@gw/testkit";
import { createGateway } from "../src/app.ts";

const here = fileURLToPath(new URL(".", import.meta.url));
const suite = fileURLToPath(import.meta.resolve("@modelcontextprotocol/conformance/package.json")).replace(
  /package\.json$/,
  "dist/index.js",
);

type Result = {
  checksPassed: number;
  checksFailed: number;
  scenarios: Map<string, boolean>;
  scored: Set<string>;
};

async function main(): Promise<void> {
  const refPort = await freePort();
  // Node itself with tsx's loader (not npx): the child is the server, so killing it ends it (an
  // npx wrapper died alone and left the server holding the pipe, and this run never exited).
  const reference = spawn(
    process.execPath,
    ["--import", import.meta.resolve("tsx"), `${here}reference-server.ts`],
    {
      env: { ...process.env, PORT: String(refPort) },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let gw: TestApp | undefined;
  let relay: { url: string; close: () => void } | undefined;
  try {
    await listening(reference);
    const refUrl = `http://127.0.0.1:${refPort}/mcp`;
    gw = await serveApp(createGateway, { GW_LOG_LEVEL: "silent" }, "gateway");
    const bearer = await token(newTenant());
    const cp = client(gw.url, bearer);
    const member = await cp("POST", "/v1/agents", {
      name: "reference",
      protocol: "mcp",
      upstream_url: refUrl,
    });
    const virtual = await cp("POST", "/v1/agents", {
      name: "everything-virtual",
      protocol: "mcp",
      members: [{ agent_id: member.json.id, prefix: "" }],
      // The suite sends bursts the default per-agent bucket would refuse (429).
      rate_limit: { rps: 1_000_000, burst: 1_000_000 },
    });
    if (virtual.status !== 201) throw new Error(`virtual agent: ${virtual.status} ${virtual.text}`);
    // The suite has no option for a bearer token: a relay adds the caller's, as a client would.
    relay = await authRelay(`${gw.url}/v1/proxy/${virtual.json.id}/stream`, bearer);
    const [only] = process.argv.slice(2);
    if (only === "serve") {
      console.log(`reference ${refUrl}\nvirtual ${relay.url}`);
      await new Promise((r) => process.once("SIGINT", r));
      return;
    }
    if (only) {
      console.log(await suiteOutput(["--url", relay.url, "--scenario", only, "--verbose"]));
      return;
    }
    const direct = await runSuite(refUrl);
    const through = await runSuite(relay.url);
    report(direct, through);
    const ok = through.checksPassed >= direct.checksPassed && passedScored(through) >= passedScored(direct);
    process.exitCode = ok ? 0 : 1;
  } finally {
    relay?.close();
    await gw?.close();
    reference.kill();
  }
}

function passedScored(r: Result): number {
  return [...r.scored].filter((s) => r.scenarios.get(s)).length;
}

function report(direct: Result, through: Result): void {
  const line = (name: string, r: Result) =>
    `${name}: ${passedScored(r)}/${r.scored.size} required scenarios passed; checks ${r.checksPassed} passed, ${r.checksFailed} failed`;
  console.log(line("reference server directly", direct));
  console.log(line("through a virtual server", through));
  for (const [scenario, passed] of direct.scenarios) {
    if (through.scenarios.get(scenario) !== passed) {
      console.log(
        `  differs: ${scenario} (direct ${passed ? "passes" : "fails"}, virtual ${through.scenarios.get(scenario) ? "passes" : "fails"})`,
      );
    }
  }
}

/** Runs the suite's required 2026-07-28 server scenarios against `url` and reads its summary. */
async function runSuite(url: string): Promise<Result> {
  const out = await suiteOutput(["--url", url, "--requirements", "2026-07-28"]);
  const total = /Total: (\d+) passed, (\d+) failed/.exec(out);
  const scenarios = new Map<string, boolean>();
  for (const m of out.matchAll(/^([✓✗]) ([\w-]+): \d+ passed, \d+ failed$/gm)) {
    if (!scenarios.has(m[2] as string)) scenarios.set(m[2] as string, m[1] === "✓");
  }
  const notScored = new Set([...out.matchAll(/^ {2}[✓✗] ([\w-]+) \(/gm)].map((m) => m[1] as string));
  return {
    checksPassed: Number(total?.[1] ?? 0),
    checksFailed: Number(total?.[2] ?? 0),
    scenarios,
    scored: new Set([...scenarios.keys()].filter((s) => !notScored.has(s))),
  };
}

/** The suite's server command; its results go to a temporary directory. */
function suiteOutput(args: string[]): Promise<string> {
  return new Promise<string>((resolve) => {
    const child = spawn(
      process.execPath,
      ["--import", `${here}globsync-stub.mjs`, suite, "server", ...args],
      {
        stdio: ["ignore", "pipe", "pipe"],
        cwd: tmpdir(),
      },
    );
    let text = "";
    child.stdout.on("data", (c: Buffer) => {
      text += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      text += c.toString();
    });
    child.on("close", () => resolve(text));
  });
}

/** Forwards every request to `target` with the caller's bearer token, streaming both ways. */
async function authRelay(target: string, bearer: string): Promise<{ url: string; close: () => void }> {
  const server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${bearer}` };
    delete headers.host;
    const up = request(target, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on("error", () => res.destroy());
    res.on("close", () => up.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function listening(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (c: Buffer) => {
      if (c.toString().includes("running on")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`reference server exited (${code})`)));
  });
}

await main();
