/** Bounds of the walks one process follows: memory stays small whatever servers and callers do. */
const MAX_WALKS = 1_000;
const MAX_PAGES = 1_000;
const MAX_NAMES = 100_000;
const WALK_TTL_MS = 10 * 60_000;

type Walk = { names: Set<string>; cursors: Set<string>; pages: number; expires: number };

/**
 * Cursor walks of `tools/list` in progress, so the catalog knows when it saw a complete list: a
 * first page (no cursor) without `nextCursor`, or a walk followed page by page from the first to
 * one without `nextCursor`. Only a complete list may mark a pinned tool `removed`. A page whose
 * walk this process did not see begin (another replica served it, or it expired) is learned but
 * completes nothing; a cursor the walk already gave (a loop), or a walk past MAX_PAGES or
 * MAX_NAMES, is dropped.
 */
export class Walks {
  #pending = new Map<string, Walk>();

  /** Records one page; returns every name of the list when this page completed it, else null. */
  step(
    scope: string,
    requestCursor: string | null,
    names: readonly string[],
    nextCursor: string | null,
  ): Set<string> | null {
    const now = Date.now();
    let walk: Walk | undefined;
    if (requestCursor === null) {
      walk = { names: new Set(), cursors: new Set(), pages: 0, expires: 0 };
    } else {
      const key = `${scope}\n${requestCursor}`;
      walk = this.#pending.get(key);
      this.#pending.delete(key);
      if (!walk || walk.expires < now) return null;
    }
    for (const n of names) walk.names.add(n);
    walk.pages++;
    if (nextCursor === null) return walk.names;
    if (walk.cursors.has(nextCursor) || walk.pages >= MAX_PAGES || walk.names.size > MAX_NAMES) return null;
    walk.cursors.add(nextCursor);
    walk.expires = now + WALK_TTL_MS;
    if (this.#pending.size >= MAX_WALKS) {
      const oldest = this.#pending.keys().next().value;
      if (oldest !== undefined) this.#pending.delete(oldest);
    }
    this.#pending.set(`${scope}\n${nextCursor}`, walk);
    return null;
  }
}
