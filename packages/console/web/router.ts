// Hash routing (`#/invocations?status=failed`): the server serves one page at /console and never
// needs to know the console's routes, and a reload keeps the screen and its filters.
import { useEffect, useState } from "preact/hooks";

export type Route = { path: string; segments: string[]; query: URLSearchParams };

function parse(hash: string): Route {
  const raw = hash.replace(/^#/, "") || "/";
  const [path = "/", qs = ""] = raw.split("?", 2);
  return { path, segments: path.split("/").filter(Boolean), query: new URLSearchParams(qs) };
}

/** `#` link for a console path and optional query (empty values dropped). */
export function href(path: string, query: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") q.set(k, String(v));
  const qs = q.toString();
  return `#${path}${qs ? `?${qs}` : ""}`;
}

export function navigate(path: string, query: Record<string, string | number | undefined> = {}) {
  location.hash = href(path, query);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.hash));
  useEffect(() => {
    const on = () => setRoute(parse(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}
