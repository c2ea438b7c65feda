// @stores once: spawns pnpm start --demo, which picks its own store.
// `pnpm start --demo` (`pnpm demo`): one command, no internet, and the calls it prints work as
// printed: a streaming call, a transactional call and its poll, and an MCP tools/list.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { client } from "@gw/testkit";
import { describe, expect, it } from "vitest";
import { spawnGateway } from "./helpers.ts";

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
        GW_DEV_FILE: join(dir, ".gw-dev.json"),
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
