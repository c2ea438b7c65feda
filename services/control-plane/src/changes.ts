import type { AppEnv } from "@gw/http";
import type { Change, ChangeBus } from "@gw/runtime";
import type { MiddlewareHandler } from "hono";

/** Write routes whose success changes what the data plane caches, by path. */
const WATCHED: ReadonlyArray<[RegExp, Change["kind"]]> = [
  [/^\/v1\/agents\/([^/]+)$/, "agent"],
  [/^\/v1\/agents\/([^/]+)\/tools\/(?:pin|refresh)$/, "tools"],
  [/^\/v1\/credentials\/([^/]+)$/, "credential"],
  // A disconnect drops the tokens every replica holds for that credential (they are re-read);
  // completing a connect publishes its credential itself (the path does not name it).
  [/^\/v1\/connections\/(?!complete$)([^/]+)$/, "credential"],
  [/^\/v1\/policy$/, "policy"],
  [/^\/v1\/settlement\/config$/, "settlement"],
];

/**
 * Announces every successful write to cached catalog state on the change bus before the answer
 * leaves (docs/architecture.md, Writes take effect on the next call): the caller's next call sees it on this process, and every other
 * replica within about a second. One place for every write route, present and future.
 */
export function publishWrites(changes: ChangeBus): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (c.req.method === "GET" || c.req.method === "HEAD" || c.res.status >= 400) return;
    for (const [re, kind] of WATCHED) {
      const m = re.exec(c.req.path);
      if (!m) continue;
      await changes.publish({ kind, tenantId: c.var.principal.tenantId, ...(m[1] ? { id: m[1] } : {}) });
      return;
    }
  };
}
