import {
  authenticate,
  type BearerError,
  formatBearerChallenge,
  type Principal,
  type TokenVerifier,
} from "@gw/auth";
import type { Logger } from "@gw/telemetry";
import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { context } from "@opentelemetry/api";
import { Hono, type MiddlewareHandler } from "hono";
import { errorResponse } from "./errors.ts";
import { checkQuery, endServerSpan, requestIdOf, startServerSpan } from "./exchange.ts";
import { methodNotAllowed } from "./methods.ts";

export type AppEnv = {
  Bindings: HttpBindings;
  Variables: { principal: Principal; requestId: string; log: Logger };
};

/**
 * The base every service app starts from: request id, structured access log, the one error
 * mapping, and JSON 404/405 answers (405 with `Allow` for every registered path, see methods.ts).
 * Routes are added by the service's own createApp.
 */
export function createBaseApp(opts: { logger: Logger; accessLog?: boolean }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    const requestId = requestIdOf(c.req.header("x-request-id"));
    c.set("requestId", requestId);
    c.set("log", opts.logger.child({ request_id: requestId }));
    const start = performance.now();
    const { span, ctx } = startServerSpan(c.req.method, requestId, c.env?.incoming?.headers ?? {});
    try {
      await context.with(ctx, next);
    } finally {
      const route = c.req.matchedRoutes.findLast((r) => r.method !== "ALL")?.path;
      const status = c.res === RESPONSE_ALREADY_SENT ? c.env.outgoing.statusCode : c.res.status;
      endServerSpan(span, c.req.method, route, status);
    }
    // A handler that wrote the response itself (streaming) logs its own outcome.
    if (c.res === RESPONSE_ALREADY_SENT) return;
    c.header("X-Request-Id", requestId);
    if (opts.accessLog !== false) {
      c.var.log.info(
        {
          method: c.req.method,
          path: c.req.path,
          status: c.res.status,
          ms: Math.round((performance.now() - start) * 10) / 10,
        },
        "request",
      );
    }
  });
  // The NUL rule (see text.ts) for every query parameter of every route, before any handler runs.
  app.use(async (c, next) => {
    checkQuery(c.req.url);
    await next();
  });
  app.onError((err, c) => errorResponse(c, err));
  // Routes are all registered by the time a request arrives, so the answer is computed from them.
  app.notFound((c) => {
    const notAllowed = methodNotAllowed(app, c.req.path);
    return notAllowed ? errorResponse(c, notAllowed) : c.json({ error: "not found" }, 404);
  });
  return app;
}

/**
 * Bearer authentication: 401 with an empty body for anything short of a valid token (the scheme
 * name in any case, RFC 7235). The 401 carries `WWW-Authenticate` (RFC 6750 §3), with
 * `error="invalid_token"` when a token was presented: `challenge` builds it from the path called
 * and that error (the proxy names its protected-resource metadata there, RFC 9728 §5.1).
 */
export function requireAuth(
  verify: TokenVerifier,
  opts: { challenge?: (path: string, error: BearerError | undefined) => string } = {},
): MiddlewareHandler<AppEnv> {
  const challenge = opts.challenge ?? ((_path, error) => formatBearerChallenge({ error }));
  return async (c, next) => {
    const auth = await authenticate(verify, c.req.header("authorization"));
    if (!auth.principal) {
      return c.body(null, 401, { "WWW-Authenticate": challenge(c.req.path, auth.error) });
    }
    c.set("principal", auth.principal);
    await next();
  };
}
