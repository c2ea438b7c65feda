/**
 * gw-verify: the reference verifier for verified-action mode (docs/verifier.md); its commands are
 * in HELP below. Exit status: 0 verified (or the command succeeded), 1 rejected, 2 usage or
 * configuration error.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { LIMITS } from "@gw/core";
import { helpRequested, printHelp } from "@gw/core/command-line";
import { generateSigningKey, loadTrustedKeys } from "../bundle/keys.ts";
import { mintBundle } from "../bundle/mint.ts";
import { verifyBundle } from "../bundle/verify.ts";
import { AGENT_CONSTRAINT, ENVELOPE_SCHEMA, TENANT_CONSTRAINT } from "../schemas.ts";
import { installWrapper } from "./install.ts";

const USAGE = "usage: gw-verify <keygen | mint | verify | install> [options]  (pnpm gw-verify …)";
const HELP = [
  "The reference verifier of verified-action mode (docs/verifier.md).",
  "",
  "  gw-verify keygen --kid <kid> --out <private-jwk-file>",
  "      writes a new signing key (mode 0600) and prints its public JWK",
  "  gw-verify mint --key <private-jwk-file> --tool <name> --principal <sub> --tenant <id>",
  "                 --agent <agt_…> [--arguments <json>] [--constraint k=v]… [--ttl <s>] [--envelope]",
  "      prints a signed authorization bundle (with --envelope, the whole call carrying it)",
  "  gw-verify verify --keys <trusted-keys.json> --format json -",
  "      reads a bundle on stdin and prints the verdict",
  "  gw-verify install --keys <trusted-keys.json> --out <dir>",
  "      writes <dir>/gw-verify, the program to name in GW_VERIFIER_BINARY",
  "  --help   print this and exit",
  "",
  "Exit status: 0 verified (or the command succeeded), 1 rejected, 2 usage or configuration error.",
].join("\n");

class UsageError extends Error {}

type Args = { command: string | undefined; positional: string[]; options: Map<string, string[]> };

const FLAGS = new Set(["envelope"]);

function parseArgs(argv: string[]): Args {
  const options = new Map<string, string[]>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const name = arg.slice(2);
    const value = FLAGS.has(name) ? "true" : argv[++i];
    if (value === undefined) throw new UsageError(`${arg} needs a value`);
    options.set(name, [...(options.get(name) ?? []), value]);
  }
  return { command: positional.shift(), positional, options };
}

function one(args: Args, name: string): string {
  const values = args.options.get(name);
  if (values?.length !== 1 || values[0] === undefined) throw new UsageError(`--${name} is required once`);
  return values[0];
}

async function readStdin(max: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function verifyCommand(args: Args): Promise<number> {
  if (one(args, "format") !== "json" || args.positional.join(" ") !== "-") {
    throw new UsageError("usage: gw-verify verify --keys <file> --format json -");
  }
  const trusted = loadTrustedKeys(one(args, "keys"));
  const input = await readStdin(LIMITS.bundleMaxBytes);
  const verdict = input === null ? { status: "rejected", reason: "too_large" } : verifyBundle(input, trusted);
  process.stdout.write(`${JSON.stringify(verdict)}\n`);
  return verdict.status === "verified" ? 0 : 1;
}

function keygenCommand(args: Args): number {
  const { privateJwk, publicJwk } = generateSigningKey(one(args, "kid"));
  writeFileSync(one(args, "out"), `${JSON.stringify(privateJwk)}\n`, { mode: 0o600, flag: "wx" });
  process.stdout.write(`${JSON.stringify(publicJwk)}\n`);
  return 0;
}

function mintCommand(args: Args): number {
  const tool = one(args, "tool");
  const argumentsJson = args.options.get("arguments")?.[0] ?? "{}";
  const toolArguments = JSON.parse(argumentsJson) as unknown;
  if (typeof toolArguments !== "object" || toolArguments === null || Array.isArray(toolArguments)) {
    throw new UsageError("--arguments must be a JSON object");
  }
  const constraints: Record<string, unknown> = {
    [TENANT_CONSTRAINT]: one(args, "tenant"),
    [AGENT_CONSTRAINT]: one(args, "agent"),
  };
  for (const kv of args.options.get("constraint") ?? []) {
    const at = kv.indexOf("=");
    if (at < 1) throw new UsageError("--constraint takes key=value");
    constraints[kv.slice(0, at)] = kv.slice(at + 1);
  }
  const ttl = args.options.get("ttl")?.[0];
  const bundle = mintBundle({
    privateJwk: JSON.parse(readFileSync(one(args, "key"), "utf8")),
    request: { tool, arguments: toolArguments as Record<string, unknown> },
    mission: { principal: one(args, "principal"), constraints },
    ...(ttl === undefined ? {} : { ttlSeconds: Number(ttl) }),
  });
  const call = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: tool, arguments: toolArguments },
  };
  const out = args.options.has("envelope")
    ? { schema: ENVELOPE_SCHEMA, call, authorization: bundle }
    : bundle;
  process.stdout.write(`${JSON.stringify(out)}\n`);
  return 0;
}

async function installCommand(args: Args): Promise<number> {
  const entry = fileURLToPath(import.meta.url);
  const wrapper = await installWrapper({ keys: one(args, "keys"), out: one(args, "out"), entry });
  process.stdout.write(`${wrapper}\n`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  if (helpRequested(argv)) printHelp(USAGE, HELP);
  const args = parseArgs(argv);
  switch (args.command) {
    case "verify":
      return verifyCommand(args);
    case "keygen":
      return keygenCommand(args);
    case "mint":
      return mintCommand(args);
    case "install":
      return installCommand(args);
    default:
      throw new UsageError(
        `${args.command ? `unknown command '${args.command}'` : "a command is required"}; ${USAGE}`,
      );
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`gw-verify: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 2;
}
