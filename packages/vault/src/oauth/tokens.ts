/** Tokens are used until this long before they expire, so none expires on its way upstream. */
export const EXPIRY_MARGIN_S = 30;
/** Most credentials, and most caller tokens per credential, held at once (oldest dropped first). */
const MAX_ENTRIES = 10_000;

type Entry = { token: string; until: number };

/**
 * Access tokens of OAuth credentials, in this process's memory only (never stored, never sent to
 * another process). Keyed by credential, then by the credential's version and, for token
 * exchange, the sha256 of the caller's token (never the token itself): a rotation (a new
 * version) misses at once on every replica, and `forget` drops what a write made useless.
 *
 * `get` fetches at most once at a time per key (single flight): concurrent calls that miss wait
 * for the same request to the token endpoint. A failed fetch is not remembered: the next call tries
 * again.
 */
export class TokenCache {
  readonly #byCredential = new Map<string, Map<string, Entry>>();
  readonly #inFlight = new Map<string, Promise<string>>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async get(
    credential: { tenantId: string; id: string },
    subKey: string,
    fetch: () => Promise<{ token: string; expiresIn: number }>,
  ): Promise<string> {
    const credKey = `${credential.tenantId}\u0000${credential.id}`;
    const hit = this.#byCredential.get(credKey)?.get(subKey);
    if (hit && hit.until > this.#now()) return hit.token;
    const flightKey = `${credKey}\u0000${subKey}`;
    const pending = this.#inFlight.get(flightKey);
    if (pending) return pending;
    const started = this.#now();
    const p = fetch()
      .then(({ token, expiresIn }) => {
        // Lifetime counts from the request: the answer may have taken a while to arrive.
        const until = started + (expiresIn - EXPIRY_MARGIN_S) * 1000;
        if (until > this.#now()) this.#put(credKey, subKey, { token, until });
        return token;
      })
      .finally(() => this.#inFlight.delete(flightKey));
    this.#inFlight.set(flightKey, p);
    return p;
  }

  /** Drops the tokens of one credential, or of every credential of the tenant (no `id`). */
  forget(tenantId: string, id?: string): void {
    if (id !== undefined) {
      this.#byCredential.delete(`${tenantId}\u0000${id}`);
      return;
    }
    const prefix = `${tenantId}\u0000`;
    for (const key of this.#byCredential.keys()) if (key.startsWith(prefix)) this.#byCredential.delete(key);
  }

  #put(credKey: string, subKey: string, entry: Entry): void {
    let tokens = this.#byCredential.get(credKey);
    if (!tokens) {
      evictOne(this.#byCredential);
      tokens = new Map();
      this.#byCredential.set(credKey, tokens);
    }
    tokens.delete(subKey);
    evictOne(tokens, this.#now());
    tokens.set(subKey, entry);
  }
}

/** Keeps a map under MAX_ENTRIES: drops expired entries first, else the oldest. */
function evictOne<V>(map: Map<string, V>, now?: number): void {
  if (map.size < MAX_ENTRIES) return;
  if (now !== undefined) {
    for (const [k, v] of map) if ((v as Entry).until <= now) map.delete(k);
    if (map.size < MAX_ENTRIES) return;
  }
  const oldest = map.keys().next().value;
  if (oldest !== undefined) map.delete(oldest);
}
