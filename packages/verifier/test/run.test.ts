import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runVerifier, VERIFIER_STDOUT_MAX_BYTES } from "../src/run.ts";
import {
  flooder,
  hanger,
  isAlive,
  printer,
  programDir,
  readRecording,
  recorder,
  verdict,
  writeProgram,
} from "../src/testing/programs.ts";

const dir = programDir();
const input = Buffer.from('{"schema":"gw.verifier.authorization-bundle.v1", "x": "é\\u00e9" }\n');

describe("runVerifier", () => {
  const pids: number[] = [];
  afterAll(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  });

  it("runs the program with argv `verify --format json -`, an empty environment and the exact bytes", async () => {
    const record = join(dir, "record.json");
    const result = await runVerifier(recorder(dir, record, verdict()), input);
    expect(result).toEqual({ ok: true, output: verdict() });
    const seen = readRecording(record);
    expect(seen.argv).toEqual(["verify", "--format", "json", "-"]);
    expect(seen.env).toEqual({});
    expect(seen.stdin.equals(input)).toBe(true);
  });

  it("accepts surrounding whitespace around the verdict", async () => {
    const bin = printer(dir, "spaced", `\n ${JSON.stringify(verdict())}\n`);
    expect((await runVerifier(bin, input)).ok).toBe(true);
  });

  const refused: Array<[string, () => string, string]> = [
    ["a program that does not exist", () => join(dir, "missing"), "spawn_failed"],
    ["a program that is not executable", () => writeNonExecutable(), "spawn_failed"],
    [
      "a crash (uncaught exception)",
      () => writeProgram(dir, "crash", 'throw new Error("boom")'),
      "exit_status",
    ],
    [
      "a kill by signal",
      () => writeProgram(dir, "signal", 'process.kill(process.pid, "SIGKILL")'),
      "exit_status",
    ],
    ["a valid verdict then exit 1", () => printer(dir, "exit1", JSON.stringify(verdict()), 1), "exit_status"],
    ["garbage", () => printer(dir, "garbage", "verified, trust me"), "bad_output"],
    ["empty output", () => printer(dir, "empty", ""), "bad_output"],
    ["two verdicts", () => printer(dir, "two", JSON.stringify(verdict()).repeat(2)), "bad_output"],
    [
      "a rejected verdict",
      () => printer(dir, "rejected", JSON.stringify({ status: "rejected" })),
      "bad_output",
    ],
    [
      "verified but not authorized",
      () => printer(dir, "unauth", JSON.stringify(verdict({ authorization_status: "denied" }))),
      "bad_output",
    ],
    ["an unknown member", () => printer(dir, "extra", JSON.stringify(verdict({ note: "x" }))), "bad_output"],
    [
      "a malformed digest",
      () => printer(dir, "digest", JSON.stringify(verdict({ request_digest: "sha256:ABC" }))),
      "bad_output",
    ],
    [
      "arguments that are not an object",
      () => printer(dir, "args", JSON.stringify(verdict({ request: { tool: "echo", arguments: [1] } }))),
      "bad_output",
    ],
    [
      "a duplicate key in the verdict",
      () =>
        printer(
          dir,
          "dup",
          JSON.stringify(verdict()).replace('"status":"verified"', '"status":"x","status":"verified"'),
        ),
      "bad_output",
    ],
    ["a flood of stdout", () => flooder(dir), "stdout_limit"],
  ];

  it.each(refused)("refuses %s", async (_name, make, reason) => {
    expect(await runVerifier(make(), input)).toEqual({ ok: false, reason });
  });

  it("stops reading at the stdout cap even when the output would have been a verdict", async () => {
    const padded = `${JSON.stringify(verdict())}${" ".repeat(VERIFIER_STDOUT_MAX_BYTES)}`;
    expect(await runVerifier(printer(dir, "padded", padded), input)).toEqual({
      ok: false,
      reason: "stdout_limit",
    });
  });

  it("kills a verifier that hangs, and what it started, at the time-out", async () => {
    const pidFile = join(dir, "grandchild.pid");
    const result = await runVerifier(hanger(dir, pidFile), input, { timeoutMs: 1_000 });
    expect(result).toEqual({ ok: false, reason: "timeout" });
    const grandchild = Number(readFileSync(pidFile, "utf8"));
    pids.push(grandchild);
    await expect.poll(() => isAlive(grandchild), { timeout: 5_000 }).toBe(false);
  });

  it("refuses an input over the bundle limit without starting anything", async () => {
    const record = join(dir, "never.json");
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
    expect(await runVerifier(recorder(dir, record, verdict()), big)).toEqual({
      ok: false,
      reason: "input_too_large",
    });
    expect(existsSync(record)).toBe(false);
  });
});

function writeNonExecutable(): string {
  const path = writeProgram(dir, "noexec", "");
  // chmod back to 0644: spawn fails with EACCES.
  chmodSync(path, 0o644);
  return path;
}
