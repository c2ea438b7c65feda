import { DomainError } from "@gw/core";
import type { Hono } from "hono";

type RouterRoute = { method: string };
// biome-ignore lint/suspicious/noExplicitAny: any app env.
type AnyHono = Hono<any, any, any>;

/**
 * The methods `app` serves on `path`, from the routes it registered, in the order of the `Allow`
 * header; empty when no route has this path. Middleware (`use`) and catch-alls (`all`) are
 * registered as "ALL" and never count. HEAD follows GET, as Hono answers it from the GET route.
 */
export function allowedMethods(app: AnyHono, path: string): string[] {
  const registered = new Set<string>();
  for (const r of app.routes) if (r.method !== "ALL") registered.add(r.method);
  const allowed: string[] = [];
  for (const method of [...registered].sort()) {
    // The app's own router decides, so its path rules (params, strict slashes) are the same.
    const [handlers] = app.router.match(method, path) as [Array<[[unknown, RouterRoute], unknown]>];
    if (handlers.some(([[, route]]) => route.method === method)) allowed.push(method);
  }
  if (allowed.includes("GET") && !allowed.includes("HEAD"))
    allowed.splice(allowed.indexOf("GET") + 1, 0, "HEAD");
  return allowed;
}

/** 405 with `Allow` for a known path asked with a method it does not serve; null for an unknown path. */
export function methodNotAllowed(app: AnyHono, path: string): DomainError | null {
  const allow = allowedMethods(app, path).join(", ");
  if (!allow) return null;
  return new DomainError("method_not_allowed", `method not allowed; use ${allow}`, {
    headers: { Allow: allow },
  });
}
