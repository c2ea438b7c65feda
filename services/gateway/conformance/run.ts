/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, `--requirements
 * 2026-07-28`) run twice: against the suite's reference server directly, and through a virtual
 * MCP server of a real gateway whose one member is that reference server with the empty prefix
 * (docs/mcp.md, Conformance). The gateway's GW_PUBLIC_URL is the origin the suite calls, so its
 * Origin check (docs/security.md) is what dns-rebinding-protection meets. Prints both results;
 * exits non-zero when the virtual server passes fewer checks or scenarios than the reference server
 * does directly, when dns-rebinding-protection does not pass with the gateway refusing the
 * rebinding origin itself, or when the request-header scenarios (the gateway checks the headers
 * against the body itself) do not pass through a virtual server and through a plain MCP agent.
 *
 * `pnpm --filter @gw/gateway conformance` (embedded store unless DATABASE_URL / REDIS_URL are set);
 * `... conformance <scenario>` runs one scenario through the virtual server only, verbose.
 * `... conformance --revision=2025-11-25 [<scenario>]` runs the 2025-11-25 requirements instead, with
 * the member fixed to that revision (`mcp_protocol_version`): the reference server's session
 * lifecycle, the 2025 reference server, behind a virtual server serving an older client (docs/mcp.md,
 * Older revisions). Only the scenario of a revoked session id is named and may differ (a signed id
 * is valid until it expires); any other may not.
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

const LATEST = "2026-07-28";
/** The revision whose requirements are run: 2026-07-28, or `--revision=<older revision>`. */
const revision = process.argv.find((a) => a.startsWith("--revision="))?.slice("--revision=".length) ?? LATEST;
/**
 * Scenarios the suite leaves unscored because its reference server cannot pass them, which the
 * gateway passes itself in front of any server: they count as required here. The gateway checks
 * `Mcp-Method` and `Mcp-Name` against the body and answers -32020 (docs/mcp.md, Headers and sessions).
 */
const SCORED_BY_THE_GATEWAY = new Set(["http-header-validation"]);
/**
 * Of the tasks extension's header scenario, the check the gateway answers itself; the others need
 * tasks the reference server does not have (it lists no `greet` or `slow_compute` tool).
 */
const TASKS_HEADER_CHECK = "tasks-headers-reject-mismatched-method";

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
  let relay: Awaited<ReturnType<typeof authRelay>> | undefined;
  try {
    await listening(reference);
    const refUrl = `http://127.0.0.1:${refPort}/mcp`;
    const bearer = await token(newTenant());
    // The suite has no option for a bearer token: a relay adds the caller's, as a client would. The
    // suite calls the relay, so the relay's origin is the gateway's public URL (an ingress's role):
    // the Origin the suite sends as the legitimate one is then the gateway's own (the Origin check).
    relay = await authRelay(bearer);
    gw = await serveApp(createGateway, { GW_LOG_LEVEL: "silent", GW_PUBLIC_URL: relay.origin }, "gateway");
    const cp = client(gw.url, bearer);
    const member = await cp("POST", "/v1/agents", {
      name: "reference",
      protocol: "mcp",
      upstream_url: refUrl,
      ...(revision === LATEST ? {} : { mcp_protocol_version: revision }),
    });
    const virtual = await cp("POST", "/v1/agents", {
      name: "everything-virtual",
      protocol: "mcp",
      members: [{ agent_id: member.json.id, prefix: "" }],
      // The suite sends bursts the default per-agent bucket would refuse (429).
      rate_limit: { rps: 1_000_000, burst: 1_000_000 },
    });
    if (virtual.status !== 201) throw new Error(`virtual agent: ${virtual.status} ${virtual.text}`);
    relay.routes["/mcp"] = `${gw.url}/v1/proxy/${virtual.json.id}/stream`;
    // The member is a plain MCP agent too: the Origin check is the same for it.
    relay.routes["/agent"] = `${gw.url}/v1/proxy/${member.json.id}/stream`;
    const [only] = process.argv.slice(2).filter((a) => !a.startsWith("--revision="));
    if (only === "serve") {
      console.log(`reference ${refUrl}\nvirtual ${relay.url}`);
      await new Promise((r) => process.once("SIGINT", r));
      return;
    }
    if (only) {
      console.log(await suiteOutput(["--url", relay.url, "--scenario", only, "--verbose"]));
      return;
    }
    // The two runs are independent sessions of one server: side by side, the suite's waits overlap.
    const [direct, through] = await Promise.all([runSuite(refUrl), runSuite(relay.url)]);
    report(direct, through);
    if (revision !== LATEST) {
      // Older revisions: every scenario that passes directly passes through, with no exception
      // (server-initiated messages are relayed, an ended session is refused by every replica).
      const missed = [...direct.scenarios].filter(([s, passed]) => passed && !through.scenarios.get(s));
      console.log(`passed directly, not through: ${missed.length} scenario(s)`);
      process.exitCode = missed.length === 0 && passedScored(through) >= passedScored(direct) ? 0 : 1;
      return;
    }
    const rebinding =
      (await rebindingThrough("a virtual server", relay.url, through)) &&
      (await rebindingThrough("an MCP agent", `${relay.origin}/agent`));
    const headers =
      (await headersThrough("a virtual server", relay.url, through)) &&
      (await headersThrough("an MCP agent", `${relay.origin}/agent`));
    const ok =
      through.checksPassed >= direct.checksPassed &&
      passedScored(through) >= passedScored(direct) &&
      rebinding &&
      headers;
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
    if (SCORED_BY_THE_GATEWAY.has(scenario) && !passed && through.scenarios.get(scenario)) {
      console.log(`  passed through the gateway only: ${scenario} (the gateway checks it itself)`);
    } else if (through.scenarios.get(scenario) !== passed) {
      console.log(
        `  differs: ${scenario} (direct ${passed ? "passes" : "fails"}, virtual ${through.scenarios.get(scenario) ? "passes" : "fails"})`,
      );
    }
  }
}

/**
 * The dns-rebinding-protection scenario through the gateway: it must pass (in the full run when
 * there is one, and alone), and its rebinding request must be refused by the gateway itself (403
 * `origin not allowed`), not by what is behind it: the reference server checks Origin too, an
 * upstream in general does not.
 */
async function rebindingThrough(who: string, url: string, run?: Result): Promise<boolean> {
  const scenario = "dns-rebinding-protection";
  const inRun = run === undefined || (run.scored.has(scenario) && run.scenarios.get(scenario) === true);
  const out = await suiteOutput([
    "--url",
    url,
    "--scenario",
    scenario,
    "--spec-version",
    "2026-07-28",
    "--verbose",
  ]);
  const byGateway = /"statusCode": 403,\s*"body": \{\s*"error": "origin not allowed"\s*\}/.test(out);
  const passes = inRun && /Passed: 2\/2, 0 failed/.test(out);
  console.log(
    `${scenario} through ${who}: ${passes ? "passes" : "fails"}; rebinding origin refused by the gateway: ${byGateway ? "yes" : "no"}`,
  );
  return passes && byGateway;
}

/**
 * The request-header scenarios through the gateway: `http-header-validation` passes every check
 * without a warning (a warning is a refusal without -32020), in the full run when there is one and
 * alone; of `tasks-request-headers`, the check the gateway answers itself passes.
 */
async function headersThrough(who: string, url: string, run?: Result): Promise<boolean> {
  const scenario = "http-header-validation";
  const inRun = run === undefined || (run.scored.has(scenario) && run.scenarios.get(scenario) === true);
  const out = await suiteOutput([
    "--url",
    url,
    "--scenario",
    scenario,
    "--spec-version",
    LATEST,
    "--verbose",
  ]);
  const passes = inRun && /Passed: (\d+)\/\1, 0 failed, 0 warnings/.test(out);
  console.log(`${scenario} through ${who}: ${passes ? "passes" : "fails"}`);
  // An extension's scenario: on no revision's timeline, so run without --spec-version.
  const tasks = await suiteOutput(["--url", url, "--scenario", "tasks-request-headers", "--verbose"]);
  const refused = checksOf(tasks).some((c) => c.id === TASKS_HEADER_CHECK && c.status === "SUCCESS");
  console.log(`${TASKS_HEADER_CHECK} through ${who}: ${refused ? "passes" : "fails"}`);
  return passes && refused;
}

/** The checks a verbose run of one scenario prints (a JSON array), with their status. */
function checksOf(out: string): Array<{ id: string; status: string }> {
  const start = out.indexOf("\n[\n");
  const end = out.indexOf("\n]\n", start);
  if (start < 0 || end < 0) return [];
  try {
    return JSON.parse(out.slice(start + 1, end + 2)) as Array<{ id: string; status: string }>;
  } catch {
    return [];
  }
}

/** Runs the suite's required server scenarios of `revision` against `url` and reads its summary. */
async function runSuite(url: string): Promise<Result> {
  const out = await suiteOutput(["--url", url, "--requirements", revision]);
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
    scored: new Set(
      [...scenarios.keys()].filter(
        (s) => !notScored.has(s) || (revision === LATEST && SCORED_BY_THE_GATEWAY.has(s)),
      ),
    ),
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

/**
 * Forwards every request to the target of its path in `routes` (filled once the agents exist) with
 * the caller's bearer token, streaming both ways; `url` is the `/mcp` route, `origin` the relay's
 * own: the origin the suite calls.
 */
async function authRelay(
  bearer: string,
): Promise<{ url: string; origin: string; routes: Record<string, string>; close: () => void }> {
  const relay = { url: "", origin: "", routes: {} as Record<string, string>, close: () => {} };
  const server = createServer((req, res) => {
    const target = relay.routes[req.url ?? ""];
    if (!target) {
      res.writeHead(404).end();
      return;
    }
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
  relay.origin = `http://127.0.0.1:${port}`;
  relay.url = `${relay.origin}/mcp`;
  relay.close = () => {
    server.closeAllConnections();
    server.close();
  };
  return relay;
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
