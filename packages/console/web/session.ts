// The console's bearer token lives in sessionStorage, never localStorage: it survives a reload of
// the tab, never outlives the tab, is never shared with other tabs, and is only sent to this
// origin's API (the CSP's connect-src). Both ways in keep it there: a pasted token, and the access
// token obtained from the identity provider, which also keeps when it expires.
const KEY = "gw.console.token";
const EXPIRES = "gw.console.token.expires_at";

export type StoredSession = { token: string; expiresAt?: number };

/** The tab's token, if any; `expired` when the one kept there has expired (it is dropped). */
export function readSession(now = Date.now()): { session: StoredSession | null; expired: boolean } {
  try {
    const token = sessionStorage.getItem(KEY);
    if (!token) return { session: null, expired: false };
    const expiresAt = Number(sessionStorage.getItem(EXPIRES) ?? Number.NaN);
    if (!Number.isFinite(expiresAt)) return { session: { token }, expired: false };
    if (expiresAt <= now) {
      storeSession(null);
      return { session: null, expired: true };
    }
    return { session: { token, expiresAt }, expired: false };
  } catch {
    return { session: null, expired: false };
  }
}

/** Keeps the tab's token (and its expiry, when known); null drops both. */
export function storeSession(session: StoredSession | null) {
  try {
    sessionStorage.removeItem(EXPIRES);
    if (!session) return sessionStorage.removeItem(KEY);
    sessionStorage.setItem(KEY, session.token);
    if (session.expiresAt !== undefined) sessionStorage.setItem(EXPIRES, String(session.expiresAt));
  } catch {
    // Storage disabled: the session lasts as long as the page.
  }
}
