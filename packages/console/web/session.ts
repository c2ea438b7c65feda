// The pasted token lives in sessionStorage: it survives a reload of the tab, never outlives the
// tab, and is never sent anywhere but this origin's API (the CSP's connect-src is 'self').
const KEY = "gw.console.token";

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string | null) {
  try {
    if (token) sessionStorage.setItem(KEY, token);
    else sessionStorage.removeItem(KEY);
  } catch {
    // Storage disabled: the session lasts as long as the page.
  }
}
