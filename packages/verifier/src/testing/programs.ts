import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Test verifier programs: small node scripts with an absolute interpreter in their shebang (the
 * gateway gives the verifier no PATH), each misbehaving in one way.
 */
export function programDir(): string {
  return mkdtempSync(join(tmpdir(), "gw-verifier-test-"));
}

export function writeProgram(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!${process.execPath}\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A valid positive verdict for the given binding, as a verifier would print it. */
export function verdict(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    status: "verified",
    authorization_status: "authorized",
    request_digest: `sha256:${"ab".repeat(32)}`,
    request: { tool: "echo", arguments: { text: "hi" } },
    mission: {
      principal: "user-1",
      constraints: { "gateway.tenant_id": "t1", "gateway.agent_id": "agt_1" },
    },
    ...over,
  };
}

/** A verifier that records argv, env and the exact stdin bytes to `recordPath`, then prints `output`. */
export function recorder(dir: string, recordPath: string, output: unknown): string {
  return writeProgram(
    dir,
    "recorder",
    `const fs = require("node:fs");
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  fs.writeFileSync(${JSON.stringify(recordPath)}, JSON.stringify({
    argv: process.argv.slice(2),
    env: process.env,
    stdin: Buffer.concat(chunks).toString("base64"),
  }));
  process.stdout.write(${JSON.stringify(JSON.stringify(output))});
});`,
  );
}

export type Recording = { argv: string[]; env: Record<string, string>; stdin: Buffer };

export function readRecording(path: string): Recording {
  const r = JSON.parse(readFileSync(path, "utf8")) as {
    argv: string[];
    env: Record<string, string>;
    stdin: string;
  };
  return { argv: r.argv, env: r.env, stdin: Buffer.from(r.stdin, "base64") };
}

/** Prints `output` and exits with `code`, without reading stdin. */
export function printer(dir: string, name: string, output: string, code = 0): string {
  return writeProgram(
    dir,
    name,
    `process.stdout.write(${JSON.stringify(output)}, () => process.exit(${code}));`,
  );
}

/** Starts a grandchild (in its process group), records the grandchild pid, then never answers. */
export function hanger(dir: string, pidPath: string): string {
  return writeProgram(
    dir,
    "hanger",
    `const { spawn } = require("node:child_process");
const fs = require("node:fs");
const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
fs.writeFileSync(${JSON.stringify(pidPath)}, String(child.pid));
setInterval(() => {}, 1000);`,
  );
}

/** Writes stdout without end. */
export function flooder(dir: string): string {
  return writeProgram(
    dir,
    "flooder",
    `const chunk = Buffer.alloc(16 * 1024, 0x41);
const write = () => { while (process.stdout.write(chunk)); process.stdout.once("drain", write); };
write();`,
  );
}

/** True while `pid` is a live (not zombie) process. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}
