// @stores once: the MCP protocol through a virtual server; records are covered by the proxy's suites.
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const run = fileURLToPath(new URL("../conformance/run.ts", import.meta.url));
// tsx's loader in this very process (no CLI wrapper between the test and the run).
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** One line of run.ts's report: required scenarios and checks passed. */
function figures(out: string, who: string) {
  const m = new RegExp(`${who}: (\\d+)/(\\d+) required scenarios passed; checks (\\d+) passed`).exec(out);
  if (!m) throw new Error(`no figures for ${who} in:\n${out}`);
  return { scenarios: Number(m[1]), required: Number(m[2]), checks: Number(m[3]) };
}

// The official MCP conformance suite (2026-07-28 requirements) against its reference server
// directly and through a virtual MCP server whose one member is that server (docs/mcp.md,
// Conformance): the virtual server passes at least what the reference server passes. The gateway's
// GW_PUBLIC_URL is the origin the suite calls, and dns-rebinding-protection passes through it (a
// virtual server and a plain MCP agent) with the gateway's own Origin check refusing the rebinding
// request (docs/security.md, Origin check). The request-header scenario, which the suite leaves
// unscored for its reference server, is required of the gateway and passes through both (the
// gateway checks Mcp-Method and Mcp-Name against the body and answers -32020 itself).
describe("MCP conformance through a virtual server", () => {
  it("passes every required scenario and check that the reference server passes directly", async () => {
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ["--import", tsx, run],
        { timeout: 240_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env } },
        (error, stdout, stderr) => resolve({ code: error ? (child.exitCode ?? 1) : 0, out: stdout + stderr }),
      );
    });
    const direct = figures(out, "reference server directly");
    const through = figures(out, "through a virtual server");
    // The suite really ran: the reference server passes most of it.
    expect(direct.required).toBeGreaterThan(20);
    expect(direct.scenarios).toBeGreaterThan(direct.required / 2);
    expect(through.required).toBe(direct.required);
    expect(through.scenarios).toBeGreaterThanOrEqual(direct.scenarios);
    expect(through.checks).toBeGreaterThanOrEqual(direct.checks);
    expect(out).not.toContain("differs:");
    for (const who of ["a virtual server", "an MCP agent"]) {
      expect(out).toContain(
        `dns-rebinding-protection through ${who}: passes; rebinding origin refused by the gateway: yes`,
      );
      expect(out).toContain(`http-header-validation through ${who}: passes`);
      expect(out).toContain(`tasks-headers-reject-mismatched-method through ${who}: passes`);
    }
    expect(code).toBe(0);
  }, 300_000);
});
