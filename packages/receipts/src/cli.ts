/**
 * `pnpm receipt verify <jws> [--jwks <url|file>]`: checks a receipt offline against a published
 * key set and prints its payload. Exit 0 when valid, 1 when not, 2 on bad usage. `-` as the JWS
 * reads it from stdin.
 */
import { readFileSync } from "node:fs";
import { commandLine, fail } from "@gw/core/command-line";
import { jwksFrom, verifyReceipt } from "./verify.ts";

const DEFAULT_JWKS = "http://localhost:8080/v1/receipts/jwks";
const USAGE = "usage: pnpm receipt verify <jws | -> [--jwks <url|file>]";
const HELP = [
  "Checks a signed receipt offline and prints its payload (docs/receipts.md).",
  "",
  "  verify <jws>      the receipt, as GET /v1/invocations/{id}/receipt answers it; - reads it from stdin",
  "  --jwks <url|file> the gateway's published keys: a URL or a file holding them",
  `                    (default ${DEFAULT_JWKS})`,
  "  --help            print this and exit",
  "",
  "Exit 0 when the receipt verifies, 1 when it does not, 2 on bad usage.",
].join("\n");

const { values, positionals } = commandLine({
  args: process.argv.slice(2),
  options: { jwks: { type: "string" } },
  usage: USAGE,
  help: HELP,
  positionals: true,
});
const [command, jwsArg, ...extra] = positionals;
if (command !== "verify") fail(command ? `unknown command '${command}'` : "a command is required", USAGE);
if (jwsArg === undefined) fail("the receipt (<jws> or -) is required", USAGE);
if (extra.length) fail(`unexpected argument '${extra[0]}'`, USAGE);

const jws = jwsArg === "-" ? readFileSync(0, "utf8") : jwsArg;
try {
  const payload = await verifyReceipt(jws, await jwksFrom(values.jwks ?? DEFAULT_JWKS));
  console.log(JSON.stringify(payload, null, 2));
  console.error("receipt verified");
} catch (e) {
  console.error(`receipt NOT verified: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
}
