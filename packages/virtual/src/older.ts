import { isRecord } from "@gw/jsonrpc";
import type { MemberIds } from "./member-id.ts";
import {
  ERRORS,
  type Json,
  METHODS,
  type OwnAnswer,
  PROTOCOL_VERSION_KEY,
  requestId,
  result,
  rpcError,
} from "./protocol.ts";
import { OLDER_ONLY_METHODS } from "./relays.ts";
import { clientRevisionOf, isOlderRevision } from "./revisions.ts";
import type { SessionIds } from "./session-id.ts";
import { TASK_METHODS } from "./tasks.ts";

/** Who asks, as an older client's session id must name it. */
export type SessionContext = {
  readonly tenantId: string;
  readonly agentId: string;
  readonly sessions: SessionIds;
  /** The signer of relayed requests' gateway ids (docs/mcp.md, Server-initiated messages). */
  readonly members?: MemberIds;
};

/**
 * How a request of an older revision (2025-11-25, 2025-06-18, 2025-03-26) is served (docs/mcp.md,
 * Older revisions): `initialize` is answered by the gateway (`initialize`, with the revision the
 * client gets); a request with a valid session id is served like a 2026-07-28 one (`serve`, with the
 * session's revision); `own`: the gateway's answer (ping, logging/setLevel, a session id that is not
 * valid, a missing session id); `accepted`: a notification the gateway takes (202). Null: not an
 * older-revision request (one with the 2026-07-28 envelope, or a version the gateway does not know).
 */
export type OlderPlan =
  | { kind: "initialize"; revision: string }
  | { kind: "serve"; revision: string; method: string }
  | { kind: "notify"; revision: string }
  | { kind: "own"; answer: OwnAnswer }
  | { kind: "accepted" };

/** Methods an older client may call besides those of 2026-07-28 that the gateway serves itself. */
const NOT_OLDER = new Set(["server/discover", "subscriptions/listen"]);

export function planOlder(
  msg: Json & { method: string },
  headers: { protocolVersion: string | null; sessionId: string | null },
  context: SessionContext | null,
): OlderPlan | null {
  const params = isRecord(msg.params) ? msg.params : undefined;
  const meta = params && isRecord(params._meta) ? params._meta : undefined;
  // A request with the 2026-07-28 envelope is of that revision: served exactly as before, whatever
  // session id it carries.
  if (typeof meta?.[PROTOCOL_VERSION_KEY] === "string" || context === null) return null;
  const isRequest = "id" in msg;
  const id = requestId(msg);
  if (isRequest && msg.method === "initialize") {
    return { kind: "initialize", revision: clientRevisionOf(params?.protocolVersion) };
  }
  const { sessionId, protocolVersion } = headers;
  // A version header that names no older revision (2026-07-28, or one the gateway does not know):
  // that revision's answer, whatever session id comes with it.
  if (!isOlderSpoken(protocolVersion)) return null;
  if (sessionId === null) {
    // 2026-07-28 notifications go on as before; an older request without its session is refused.
    if (!isRequest) return null;
    return {
      kind: "own",
      answer: rpcError(400, null, ERRORS.serverError, "Bad Request: Mcp-Session-Id header is required"),
    };
  }
  const claims = context.sessions.verify(sessionId);
  if (!claims || claims.tenantId !== context.tenantId || claims.agentId !== context.agentId) {
    return {
      kind: "own",
      answer: rpcError(404, isRequest ? id : null, SESSION_NOT_FOUND, "Session not found"),
    };
  }
  const { revision } = claims;
  if (!isRequest) {
    return msg.method === "notifications/initialized" ? { kind: "accepted" } : { kind: "notify", revision };
  }
  if (msg.method === "ping" || msg.method === "logging/setLevel")
    return { kind: "own", answer: result(id, {}) };
  const served =
    METHODS.has(msg.method) || TASK_METHODS.has(msg.method) || OLDER_ONLY_METHODS.has(msg.method);
  if (!served || NOT_OLDER.has(msg.method)) {
    return { kind: "own", answer: rpcError(200, id, ERRORS.methodNotFound, "Method not found") };
  }
  return { kind: "serve", revision, method: msg.method };
}

/** The code the official SDKs answer an unknown session with. */
const SESSION_NOT_FOUND = -32001;

/**
 * Whether a request's `MCP-Protocol-Version` leaves it to the older revisions: it names one, or
 * there is none (2025-03-26 clients send none). 2026-07-28 has no session: a request naming it (or
 * a version the gateway does not know) is never an older client's, whatever session id it carries,
 * and its `DELETE` and `GET` are 405 (docs/mcp.md, Older revisions).
 */
export function isOlderSpoken(protocolVersion: string | null): boolean {
  return protocolVersion === null || isOlderRevision(protocolVersion);
}

/**
 * `DELETE` of an older client's session (`isOlderSpoken`; the proxy answers any other 405): 204
 * for a session id this gateway issued to this agent, which is then refused (404) by every replica
 * (`SessionIds.end`: told through the change notifications), 404 for any other, 400 without one.
 */
export function endSession(
  sessionId: string | null,
  context: SessionContext,
): { kind: "own"; answer: OwnAnswer } {
  if (sessionId === null) {
    return {
      kind: "own",
      answer: rpcError(400, null, ERRORS.serverError, "Bad Request: Mcp-Session-Id header is required"),
    };
  }
  const claims = context.sessions.verify(sessionId);
  if (!claims || claims.tenantId !== context.tenantId || claims.agentId !== context.agentId) {
    return { kind: "own", answer: rpcError(404, null, SESSION_NOT_FOUND, "Session not found") };
  }
  context.sessions.end(sessionId);
  return { kind: "own", answer: { status: 204, message: {} } };
}
