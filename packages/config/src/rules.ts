// Typed rules for environment values: every env value is a string or absent.
import { createPrivateKey, createPublicKey } from "node:crypto";
import { accessSync, constants, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import * as v from "valibot";
import { normalOrigin } from "./origin.ts";

export const optStr = () => v.optional(v.pipe(v.string(), v.trim(), v.minLength(1, "must not be empty")));
export const bool = (dflt: boolean) =>
  v.pipe(
    v.optional(
      v.picklist(["true", "false", "1", "0", "on", "off"], "must be true or false"),
      dflt ? "true" : "false",
    ),
    v.transform((s) => s === "true" || s === "1" || s === "on"),
  );
export const int = (dflt: number, min: number, max: number) =>
  v.pipe(
    // One message for every way to miss, so "-5" is not told it is no whole number.
    v.optional(
      v.pipe(v.string(), v.regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)),
      String(dflt),
    ),
    v.transform(Number),
    v.number(),
    v.minValue(min, `must be a whole number from ${min} to ${max}`),
    v.maxValue(max, `must be a whole number from ${min} to ${max}`),
  );
export const num = (dflt: number, min: number) =>
  v.pipe(
    v.optional(
      v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/, `must be a number, at least ${min}`)),
      String(dflt),
    ),
    v.transform(Number),
    v.number(),
    v.minValue(min, `must be a number, at least ${min}`),
  );
export const url = (protocols: string[]) =>
  v.optional(
    v.pipe(
      v.string(),
      v.url("must be a URL"),
      // URL.canParse first: valibot runs this check even after v.url failed, and `new URL` throws.
      v.check(
        (s) => URL.canParse(s) && protocols.includes(new URL(s).protocol),
        `must use ${protocols.join(" or ")}`,
      ),
    ),
  );
export const kmsKey = v.optional(
  v.pipe(
    v.string(),
    v.check((s) => Buffer.from(s, "base64").length === 32, "must be 32 bytes, base64-encoded"),
    v.transform((s) => Buffer.from(s, "base64")),
  ),
);
/** An Ed25519 private JWK. Messages never echo the value: it is a secret. */
export const receiptKey = v.optional(
  v.pipe(
    v.string(),
    v.check((s) => {
      try {
        const k = JSON.parse(s) as Record<string, unknown>;
        if (k?.kty !== "OKP" || k.crv !== "Ed25519" || typeof k.d !== "string") return false;
        // The public half is derived from d; a given x must be that one.
        const priv = createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", d: k.d, x: "" }, format: "jwk" });
        return k.x === undefined || createPublicKey(priv).export({ format: "jwk" }).x === k.x;
      } catch {
        return false;
      }
    }, "must be an Ed25519 private JWK (JSON with kty OKP, crv Ed25519, d, and x matching d)"),
  ),
);
export const actorUri = v.optional(
  v.pipe(
    v.string(),
    v.check((s) => {
      try {
        new URL(s);
        return true;
      } catch {
        return false;
      }
    }, "must be a URI"),
  ),
);

/** A comma-separated list, its entries trimmed; empty entries are dropped. */
const commaList = v.pipe(
  v.optional(v.string(), ""),
  v.transform((s) =>
    s
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean),
  ),
);
export const cidrList = commaList;

/** A comma-separated list of http(s) URLs, each checked; empty entries are dropped. */
export const urlList = v.pipe(
  commaList,
  v.check(
    (urls) => urls.every((u) => URL.canParse(u) && ["http:", "https:"].includes(new URL(u).protocol)),
    "must be a comma-separated list of http(s) URLs",
  ),
  v.check((urls) => urls.length <= 16, "must name at most 16 URLs"),
);

/**
 * A comma-separated list of origins (`https://app.example.com`, `http://localhost:3000`), each
 * normalised; empty entries are dropped, a trailing `/` is tolerated.
 */
export const originList = v.pipe(
  commaList,
  v.check(
    (list) => list.every((o) => normalOrigin(o.replace(/\/$/, "")) !== null),
    "must be a comma-separated list of origins (http(s)://host[:port], no path)",
  ),
  v.transform((list) => list.map((o) => normalOrigin(o.replace(/\/$/, "")) as string)),
);

/** Loopback hosts: the only ones an `http://` OIDC issuer may name (a local identity provider in development). */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * The console's OIDC issuer: an https URL (the browser sends the operator's sign-in there), or http
 * on a loopback address for a local identity provider; no query, fragment or credentials, since the
 * discovery document is found by appending to its path (OpenID Connect Discovery).
 */
export const oidcIssuer = v.optional(
  v.pipe(
    v.string(),
    v.check((s) => URL.canParse(s), "must be a URL"),
    v.check((s) => {
      const u = new URL(s);
      return u.protocol === "https:" || (u.protocol === "http:" && isLoopbackHost(u.hostname));
    }, "must use https (http only on a loopback address such as 127.0.0.1 or localhost)"),
    v.check((s) => {
      const u = new URL(s);
      return !u.search && !u.hash && !u.username && !u.password && !s.includes("#") && !s.includes("?");
    }, "must not carry a query, fragment or credentials"),
  ),
);

/** OAuth scope tokens (RFC 6749 §3.3), separated by spaces or commas; `openid` is always requested. */
export const scopeList = v.pipe(
  v.optional(v.string(), ""),
  v.transform((s) => s.split(/[\s,]+/).filter(Boolean)),
  v.check(
    (scopes) => scopes.every((x) => /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(x)),
    "must be OAuth scope names separated by spaces or commas",
  ),
  v.check((scopes) => scopes.length <= 32, "must name at most 32 scopes"),
);

// The verifier runs with an empty environment (no PATH): only an absolute path can name it, and a
// missing or non-executable program would refuse every tools/call, so it is refused at start-up.
export const executablePath = v.optional(
  v.pipe(
    v.string(),
    v.check(isAbsolute, "must be an absolute path (the verifier runs with no PATH)"),
    v.check(isExecutableFile, "must name an executable file"),
  ),
);

export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
