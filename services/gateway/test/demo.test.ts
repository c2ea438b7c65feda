// @stores once: spawns pnpm start --demo, which picks its own store.
// `pnpm start --demo` (`pnpm demo`): one command, no internet, and the calls it prints work as
// printed: a streaming call, a transactional call and its poll, an MCP tools/list,
// and the A2A agent card and a message to the A2A agent.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type IncomingMessage, request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { client } from "@gw/testkit";
import { describe, expect, it } from "vitest";
import { groupAlive, pnpmRun, spawnGateway } from "./helpers.ts";

/** The command lines of the banner's "try it" block, in order (comments left out). */
function printedCalls(banner: string): string[] {
  const block = banner.slice(banner.indexOf("try it:"));
  return block
    .split("\n")
    .slice(1)
    .filter((l) => l.startsWith("    ") && !l.trim().startsWith("#"))
    .map((l) => l.trim());
}

describe("pnpm start --demo", () => {
  it("starts local upstreams, creates their agents, and the printed calls succeed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-demo-"));
    // Nothing about tokens or local upstreams in the environment: the demo needs none of it.
    const gw = await spawnGateway(
      {
        GW_DEV_JWT_SECRET: undefined,
        GW_SSRF_ALLOW_CIDRS: undefined,
        GW_ALLOW_HTTP_UPSTREAMS: undefined,
      },
      ["--demo"],
    );
    try {
      await expect.poll(() => gw.stderr(), { timeout: 30_000 }).toContain("try it:");
      const calls = printedCalls(gw.stderr());
      expect(calls[0]).toMatch(/^export GW_TOKEN=/);
      expect(calls).toHaveLength(7);
      // The README's account of the demo names every agent it creates.
      const readme = readFileSync(fileURLToPath(new URL("../../../README.md", import.meta.url)), "utf8");
      const section = readme.slice(readme.indexOf("### See a proxied call work, offline"));
      const said = section.slice(0, section.indexOf("\n#", 1));
      const agents = [...gw.stderr().matchAll(/^ {4}agent (demo-\S+)/gm)].map((m) => m[1] ?? "");
      expect(agents).toEqual(["demo-echo", "demo-mcp", "demo-a2a"]);
      for (const name of agents) expect(said).toContain(`\`${name}\``);
      // Run them as printed, in one shell, with a marker between the outputs.
      const script = join(dir, "calls.sh");
      writeFileSync(script, `set -e\n${calls.map((c) => `${c}\necho; echo @@@`).join("\n")}\n`);
      const { stdout } = await promisify(execFile)("bash", [script], { timeout: 60_000 });
      const [, stream, , poll, mcp, card, a2a] = stdout.split("@@@\n");

      // Streaming: the echo's three events, each carrying what was sent.
      expect(stream?.match(/event: echo/g)).toHaveLength(3);
      expect(stream).toContain("hello, streaming");
      // Transactional: the poll answers the invocation; it then completes with the echo.
      const polled = JSON.parse(poll ?? "");
      expect(polled.id).toMatch(/^inv_/);
      expect(polled.mode).toBe("transactional");
      const tokenLine = calls[0] ?? "";
      const call = client(gw.url, tokenLine.slice("export GW_TOKEN=".length));
      const echoAgent = /\/v1\/proxy\/(agt_[\w-]+)\/invocations/.exec(calls[3] ?? "")?.[1];
      await expect
        .poll(
          async () => (await call("GET", `/v1/proxy/${echoAgent}/invocations/${polled.id}`)).json.status,
          {
            timeout: 30_000,
          },
        )
        .toBe("succeeded");
      const done = await call("GET", `/v1/proxy/${echoAgent}/invocations/${polled.id}`);
      expect(Buffer.from(done.json.response.body_b64, "base64").toString()).toContain("hello, transactional");
      // MCP: tools/list answered by the local MCP server through the gateway.
      const listed = JSON.parse(mcp ?? "");
      expect(listed.result.tools.map((t: { name: string }) => t.name)).toEqual(["echo", "add"]);
      // A2A: the card names the gateway as the agent's one interface; the message comes back as a task.
      const served = JSON.parse(card ?? "");
      expect(served.supportedInterfaces).toHaveLength(1);
      expect(served.supportedInterfaces[0].url).toContain("/v1/proxy/");
      expect(a2a).toContain("hello, A2A");
      expect(JSON.parse(a2a ?? "").id).toBe(1);

      // Exactly the demo's address is exempt, not the loopback range; the refusal says how to allow
      // one, and only what is missing (http:// is allowed here already).
      const refused = await call("POST", "/v1/agents", { name: "x", upstream_url: "http://127.0.0.2:9/" });
      expect(refused.status).toBe(400);
      expect(refused.json.error).toContain("GW_SSRF_ALLOW_CIDRS");
      expect(refused.json.error).not.toContain("GW_ALLOW_HTTP_UPSTREAMS");
      // A localhost name: the fix is the address, which this process already allows; no variable.
      const echoPort = new URL(/local echo server (\S+)/.exec(gw.stderr())?.[1] ?? "").port;
      const named = await call("POST", "/v1/agents", {
        name: "x",
        upstream_url: `http://localhost:${echoPort}/echo?key=secret-in-query`,
      });
      expect(named.status).toBe(400);
      expect(named.json.error).toBe(
        `upstream_url host is not allowed (localhost names are always refused: use the address instead, http://127.0.0.1:${echoPort}/…)`,
      );
      // ... and the address it names is accepted.
      const fixed = await call("POST", "/v1/agents", {
        name: "x",
        upstream_url: `http://127.0.0.1:${echoPort}/echo`,
      });
      expect(fixed.status).toBe(201);

      // A body larger than the echo shows: the gateway forwards it whole and the echo counts it whole.
      const big = "x".repeat(200_000);
      const echoed = await call("POST", `/v1/proxy/${echoAgent}/stream`, big);
      expect(echoed.status).toBe(200);
      expect(echoed.json).toMatchObject({ bytes: 200_000 });
      expect(echoed.json.body).toBe(big.slice(0, 64 * 1024));
    } finally {
      gw.child.kill("SIGTERM");
      await once(gw.child, "exit");
    }
  }, 120_000); // a process start, three upstream calls and a poll
});

describe("pnpm demo on a kept store", () => {
  it("points its agents at this run's servers instead of making them again", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "gw-demo-")), "data");
    const env = { DATABASE_URL: undefined, GW_DATA_DIR: dataDir, GW_DEV_JWT_SECRET: undefined };
    const agentsOf = (banner: string) => [
      ...banner.matchAll(/^ {4}agent (demo-\S+) +(agt_\S+) → .* (http:\S+)/gm),
    ];
    const runs: Array<{ agents: RegExpMatchArray[]; token: string }> = [];
    try {
      for (let i = 0; i < 2; i++) {
        const gw = await spawnGateway(env, ["--demo"]);
        try {
          await expect.poll(() => gw.stderr(), { timeout: 60_000 }).toContain("try it:");
          const token = /export GW_TOKEN=(\S+)/.exec(gw.stderr())?.[1] ?? "";
          runs.push({ agents: agentsOf(gw.stderr()), token });
          const call = client(gw.url, token);
          // The tenant has the three agents once, and the echo answers through its agent.
          expect((await call("GET", "/v1/agents")).json.total).toBe(3);
          const echo = runs[i]?.agents[0]?.[2];
          const echoed = await call("POST", `/v1/proxy/${echo}/stream`, `run ${i}`);
          expect(echoed.json).toMatchObject({ body: `run ${i}` });
        } finally {
          gw.child.kill("SIGTERM");
          await once(gw.child, "exit");
        }
      }
      const [first, second] = runs;
      expect(second?.agents.map((m) => m[2])).toEqual(first?.agents.map((m) => m[2]));
      // Each run's servers listen on ports of their own: the agents follow them.
      expect(second?.agents.map((m) => m[3])).not.toEqual(first?.agents.map((m) => m[3]));
    } finally {
      rmSync(dirname(dataDir), { recursive: true, force: true });
    }
  }, 400_000); // two process starts, the first creating the store
});

describe("Ctrl-C during pnpm demo", () => {
  it("lets a stream to the demo's echo agent that is still uploading finish whole, then exits", async () => {
    const demo = pnpmRun("demo", {
      PORT: "0",
      GW_DEV_JWT_SECRET: undefined,
      GW_SSRF_ALLOW_CIDRS: undefined,
      GW_ALLOW_HTTP_UPSTREAMS: undefined,
    });
    const pgid = demo.child.pid as number;
    try {
      await expect.poll(() => demo.stderr(), { timeout: 120_000, interval: 200 }).toContain("try it:");
      const banner = demo.stderr();
      const port = Number(/agent gateway demo on http:\/\/localhost:(\d+)/.exec(banner)?.[1]);
      const jwt = /export GW_TOKEN=(\S+)/.exec(banner)?.[1] ?? "";
      const echo = /agent demo-echo (agt_\S+)/.exec(banner)?.[1] ?? "";
      const call = client(`http://127.0.0.1:${port}`, jwt);

      // A streaming call whose body is still on its way: the echo answers once it has all of it.
      const req = request({
        host: "127.0.0.1",
        port,
        method: "POST",
        path: `/v1/proxy/${echo}/stream`,
        headers: {
          authorization: `Bearer ${jwt}`,
          accept: "text/event-stream",
          "content-type": "text/plain",
        },
      });
      const answered = once(req, "response") as Promise<[IncomingMessage]>;
      req.write("hello, ");
      // In flight: the gateway has recorded it running.
      await expect
        .poll(async () => (await call("GET", `/v1/invocations?agent_id=${echo}&status=running`)).json.total, {
          timeout: 30_000,
          interval: 100,
        })
        .toBe(1);

      // Ctrl-C: the terminal signals the whole group, and pnpm forwards the signal to the gateway a
      // moment later. The kernel merges the two when both arrive before the first is handled, so the
      // forwarded copy is sent again here once the first was seen: this test meets it every time.
      process.kill(-pgid, "SIGINT");
      await expect
        .poll(() => demo.stdout(), { timeout: 30_000, interval: 20 })
        .toContain('"msg":"shutting down"');
      const { stdout: ps } = await promisify(execFile)("ps", ["-o", "pid=", "--ppid", String(pgid)]);
      const gateway = Number(ps.trim().split(/\s+/)[0]);
      expect(gateway).toBeGreaterThan(0);
      process.kill(gateway, "SIGINT");

      // The rest of the body, then the echo's whole answer: its three events, each with the body.
      req.end("still here");
      const [res] = await answered;
      expect(res.statusCode).toBe(200);
      let body = "";
      for await (const chunk of res) body += chunk.toString();
      expect(body.match(/event: echo/g)).toHaveLength(3);
      expect(body.match(/hello, still here/g)).toHaveLength(3);
      expect(body).toContain('"part":3,"of":3');

      await demo.exited;
      expect(demo.stdout()).toContain("shutdown complete");
      await expect.poll(() => groupAlive(pgid), { timeout: 30_000, interval: 100 }).toBe(false);
    } finally {
      if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL");
    }
  }, 240_000); // a start of the real command under a loaded machine
});
