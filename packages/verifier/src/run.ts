import { spawn } from "node:child_process";
import { LIMITS } from "@gw/core";
import { decodeVerifierOutput, type VerifierOutput } from "./output.ts";

/** The verifier's command line after the binary: nothing from the request ever reaches argv. */
export const VERIFIER_ARGS = Object.freeze(["verify", "--format", "json", "-"]);
export const VERIFIER_TIMEOUT_MS = 2_000;
export const VERIFIER_STDOUT_MAX_BYTES = 64 * 1024;

export type VerifierFailure =
  | "input_too_large"
  | "spawn_failed"
  | "timeout"
  | "stdout_limit"
  | "exit_status"
  | "bad_output";

export type VerifierResult = { ok: true; output: VerifierOutput } | { ok: false; reason: VerifierFailure };

export type RunOptions = { timeoutMs?: number; stdoutMaxBytes?: number };

/**
 * Runs `binary verify --format json -` with no shell and an empty environment, writes `input` (the
 * exact authorization bytes, at most `LIMITS.bundleMaxBytes`) to its stdin, and decodes its stdout.
 * The child leads its own process group, so a time-out or an oversized stdout kills everything it
 * started; the group is also killed once it exits, so nothing it left behind outlives the call.
 * A positive verdict with a non-zero exit status, or a death by signal, is a failure.
 */
export function runVerifier(
  binary: string,
  input: Uint8Array,
  opts: RunOptions = {},
): Promise<VerifierResult> {
  if (input.length > LIMITS.bundleMaxBytes) return Promise.resolve({ ok: false, reason: "input_too_large" });
  const timeoutMs = opts.timeoutMs ?? VERIFIER_TIMEOUT_MS;
  const stdoutMax = opts.stdoutMaxBytes ?? VERIFIER_STDOUT_MAX_BYTES;
  return new Promise((resolve) => {
    let settled = false;
    const chunks: Buffer[] = [];
    let size = 0;
    const child = spawn(binary, VERIFIER_ARGS, {
      shell: false,
      env: {},
      detached: true,
      stdio: ["pipe", "pipe", "ignore"],
    });
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const finish = (result: VerifierResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      killGroup();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ ok: false, reason: "timeout" }), timeoutMs);
    child.on("error", () => finish({ ok: false, reason: "spawn_failed" }));
    child.stdout.on("data", (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > stdoutMax) return finish({ ok: false, reason: "stdout_limit" });
      chunks.push(chunk);
    });
    child.on("close", (code, signal) => {
      if (code !== 0 || signal !== null) return finish({ ok: false, reason: "exit_status" });
      const output = decodeVerifierOutput(Buffer.concat(chunks));
      finish(output === null ? { ok: false, reason: "bad_output" } : { ok: true, output });
    });
    // A verifier may exit without reading its input; EPIPE then is its verdict, not ours.
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}
