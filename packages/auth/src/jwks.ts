import { callOut, operatorDispatcher } from "@gw/upstream";
import { importJWK, type JWK, type JWSHeaderParameters } from "jose";

/** A key from the issuer's set, imported once. */
type CryptoKeyish = Awaited<ReturnType<typeof importJWK>>;

export type JwksOptions = {
  /** Minimum time between two fetches, successful or not (docs/security.md: at most once per 5 s). */
  minRefetchMs?: number;
  /** A set older than this is refetched before use. */
  maxAgeMs?: number;
  timeoutMs?: number;
};

/** At most this many keys are tried for one token (a set with duplicate `kid`s). */
const MAX_CANDIDATES = 4;

/** A key set is a few keys of a few hundred bytes each; a larger answer is not a key set. */
const JWKS_MAX_BYTES = 1024 * 1024;

/**
 * The issuer's JSON Web Key Set, fetched on demand. Unlike jose's remote set, every fetch attempt
 * (a failed one too) counts against one 5 s budget, and any key-resolution miss (unknown `kid`,
 * duplicate `kid`s, no key for the algorithm) may refetch within that budget. So a bad answer or
 * a set published with duplicate `kid`s is replaced within seconds of the issuer fixing it,
 * instead of after jose's 30 s cooldown or 10 min cache age, while a flood of tokens with random
 * `kid`s still costs at most one fetch per 5 s. A failed fetch keeps the previous set.
 */
export function createJwksSource(url: URL, opts: JwksOptions = {}) {
  const minRefetchMs = opts.minRefetchMs ?? 5_000;
  const maxAgeMs = opts.maxAgeMs ?? 600_000;
  const timeoutMs = opts.timeoutMs ?? 5_000;
  let keys: JWK[] = [];
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let lastAttempt = Number.NEGATIVE_INFINITY;
  let pending: Promise<void> | undefined;
  const imported = new WeakMap<JWK, Promise<CryptoKeyish>>();

  const fetchSet = async () => {
    // The operator's URL, often on a private network: the process's unguarded dispatcher.
    const answer = await callOut({
      via: operatorDispatcher(),
      url,
      headers: { accept: "application/json, application/jwk-set+json" },
      timeoutMs,
      maxBytes: JWKS_MAX_BYTES,
      reads: (status) => status === 200,
    });
    if (answer.kind === "failed") throw answer.error;
    if (answer.kind === "dropped") throw new Error("JWKS answered a non-200 status");
    if (answer.kind === "too_large") throw new Error("JWKS answer is too large");
    const body = JSON.parse(answer.body.toString("utf8")) as { keys?: unknown };
    if (!Array.isArray(body.keys)) throw new Error("JWKS has no keys array");
    keys = body.keys.filter((k): k is JWK => typeof k === "object" && k !== null && "kty" in k);
    fetchedAt = Date.now();
  };

  /** Refetches unless a fetch started less than `minRefetchMs` ago; never throws. */
  const refresh = (): Promise<void> => {
    if (pending) return pending;
    if (Date.now() - lastAttempt < minRefetchMs) return Promise.resolve();
    lastAttempt = Date.now();
    pending = fetchSet()
      .catch(() => {})
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };

  const matching = (header: JWSHeaderParameters): JWK[] =>
    keys.filter(
      (k) =>
        (header.kid === undefined || k.kid === header.kid) &&
        (k.alg === undefined || k.alg === header.alg) &&
        (k.use === undefined || k.use === "sig") &&
        ktyFits(k.kty, header.alg),
    );

  const importKey = (k: JWK, alg: string): Promise<CryptoKeyish> => {
    let p = imported.get(k);
    if (!p) {
      p = importJWK(k, alg);
      imported.set(k, p);
    }
    return p;
  };

  return {
    /**
     * The candidate keys for a token's header: refetches first when the set is stale, and once
     * more (within the budget) when no key, or more than one, matches.
     */
    async candidates(header: JWSHeaderParameters): Promise<CryptoKeyish[]> {
      const alg = header.alg;
      if (typeof alg !== "string") return [];
      if (Date.now() - fetchedAt > maxAgeMs) await refresh();
      let found = matching(header);
      if (found.length !== 1) {
        await refresh();
        found = matching(header);
      }
      const out: CryptoKeyish[] = [];
      for (const k of found.slice(0, MAX_CANDIDATES)) {
        try {
          out.push(await importKey(k, alg));
        } catch {
          // A malformed key in the set is skipped; the others may still verify.
        }
      }
      return out;
    },
    /** Asks for a refetch (within the budget), e.g. after every candidate failed to verify. */
    refresh,
  };
}

function ktyFits(kty: string | undefined, alg: string | undefined): boolean {
  if (alg === "RS256") return kty === "RSA";
  if (alg === "ES256") return kty === "EC";
  if (alg === "EdDSA") return kty === "OKP";
  return false;
}
