/**
 * `pnpm receipt verify <jws> [--jwks <url|file>]`: checks a receipt offline against a published
 * key set and prints its payload. Exit 0 when valid, 1 when not, 2 on bad usage. `-` as the JWS
 * reads it from stdin.
 */
import { readFileSync } from "node:fs";
import { jwksFrom, verifyReceipt } from "./verify.ts";

const USAGE =
  "usage: pnpm receipt verify <jws | -> [--jwks <url|file>]  (default http://localhost:8080/v1/receipts/jwks)";

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  let jwks = "http://localhost:8080/v1/receipts/jwks";
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    if (a === "--jwks") {
      const next = rest[++i];
      if (!next) break;
      jwks = next;
    } else if (a.startsWith("--jwks=")) jwks = a.slice("--jwks=".length);
    else positional.push(a);
  }
  if (command !== "verify" || positional.length !== 1) {
    console.error(USAGE);
    return 2;
  }
  const jws = positional[0] === "-" ? readFileSync(0, "utf8") : (positional[0] as string);
  try {
    const payload = await verifyReceipt(jws, await jwksFrom(jwks));
    console.log(JSON.stringify(payload, null, 2));
    console.error("receipt verified");
    return 0;
  } catch (e) {
    console.error(`receipt NOT verified: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
