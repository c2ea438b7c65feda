// @stores once: the MCP protocol through a virtual server; records are covered by the proxy's suites.
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const run = fileURLToPath(new URL("../conformance/run.ts", import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

function figures(out: string, who: string) {
  const m = new RegExp(`${who}: (\\d+)/(\\d+) required scenarios passed; checks (\\d+) passed`).exec(out);
  if (!m) throw new Error(`no figures for ${who} in:\n${out}`);
  return { scenarios: Number(m[1]), required: Number(m[2]), checks: Number(m[3]) };
}

// The official MCP conformance suite, 2025-11-25 requirements, against the reference server
// directly and through a virtual MCP server whose one member is that server spoken to in
// 2025-11-25 (docs/mcp.md, Older revisions): the virtual server passes every required scenario the
// server passes directly, server-initiated requests and resource subscriptions included (docs/mcp.md,
// Server-initiated messages) and the unscored session lifecycle (a DELETEd session id is refused
// afterwards, by every replica): no scenario differs.
describe("MCP conformance 2025-11-25 through a virtual server", () => {
  it("passes every scenario the reference server passes directly, with no exception", async () => {
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ["--import", tsx, run, "--revision=2025-11-25"],
        { timeout: 240_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env } },
        (error, stdout, stderr) => resolve({ code: error ? (child.exitCode ?? 1) : 0, out: stdout + stderr }),
      );
    });
    const direct = figures(out, "reference server directly");
    const through = figures(out, "through a virtual server");
    expect(direct.required).toBeGreaterThan(20);
    expect(direct.scenarios).toBeGreaterThan(direct.required / 2);
    expect(through.required).toBe(direct.required);
    expect(out).toMatch(/passed directly, not through: 0 scenario/);
    // Every required scenario that passes directly passes through, with no exception.
    expect(through.scenarios).toBe(direct.scenarios);
    expect(out).not.toMatch(/differs: /);
    expect(code).toBe(0);
  }, 300_000);
});
