import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadTrustedKeys } from "../bundle/keys.ts";

/** The CLI's source entry, for installing from the repository (tests, `pnpm gw-verify install`). */
export const GW_VERIFY_ENTRY = fileURLToPath(new URL("./gw-verify.ts", import.meta.url));

/** Single-quotes a string for /bin/sh. */
const shQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Installs the reference verifier as a program usable as GW_VERIFIER_BINARY: `<out>/gw-verify.mjs`
 * (the CLI bundled into one file, so it starts fast and needs no node_modules) and `<out>/gw-verify`,
 * a /bin/sh wrapper naming node, the bundle and the trusted-keys file by absolute path, because the
 * gateway runs the verifier with an empty environment (no PATH, no HOME). Returns the wrapper path.
 */
export async function installWrapper(opts: { keys: string; out: string; entry?: string }): Promise<string> {
  const keys = resolve(opts.keys);
  loadTrustedKeys(keys); // refuse to install around a key file that would fail every call
  const dir = resolve(opts.out);
  mkdirSync(dir, { recursive: true });
  const bundlePath = join(dir, "gw-verify.mjs");
  const { build } = await import("esbuild");
  await build({
    entryPoints: [opts.entry ?? GW_VERIFY_ENTRY],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: bundlePath,
    external: ["esbuild"],
    logLevel: "silent",
  });
  const wrapper = join(dir, "gw-verify");
  const lines = [
    "#!/bin/sh",
    "# Written by `gw-verify install`. Absolute paths only: the gateway gives the verifier no environment.",
    `exec ${shQuote(process.execPath)} ${shQuote(bundlePath)} --keys ${shQuote(keys)} "$@"`,
    "",
  ];
  writeFileSync(wrapper, lines.join("\n"));
  chmodSync(wrapper, 0o755);
  return wrapper;
}
