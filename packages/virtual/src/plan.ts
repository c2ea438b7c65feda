import { isRecord } from "@gw/jsonrpc";
import type { Member, VirtualServer } from "./members.ts";
import { routeName } from "./names.ts";
import { planOlder, type SessionContext } from "./older.ts";
import {
  ERRORS,
  type Json,
  METHODS,
  type OwnAnswer,
  requestId,
  rpcError,
  versionRefusal,
} from "./protocol.ts";
import { OLDER_ONLY_METHODS, planReply, type ReplyPlan, type StreamPlan } from "./relays.ts";
import { CALL_TOOL, callToolRefusal, SEARCH_TOOL, type SearchArgs, searchArgs } from "./search.ts";
import { planTask, type TaskPlan } from "./tasks.ts";

/**
 * What a virtual server does with one request (docs/mcp.md, Virtual MCP servers):
 * - `own`: it answers itself without calling a member (a removed or unknown method, an older
 *   protocol version, an unknown name);
 * - `routed`: one member serves it, with the member's own name in the body and in `Mcp-Name`;
 *   its answer goes back to the caller as the member sent it (an `input_required` result too);
 * - `fanout`: the members are asked and their answers merged (`fanout.ts`);
 * - `notify`: a notification, sent to every member; the caller gets 202;
 * - `listen`: `subscriptions/listen`, the members' streams merged into one;
 * - `task`: an MCP task request (a task-augmented tools/call, `tasks/*`; `tasks.ts`);
 * - `search`: on a search-mode server, its `tools/list` (the gateway's two tools) and its
 *   `search_tools` calls (docs/mcp.md, Tool search on virtual servers), answered by the forward
 *   step from the catalog.
 * `client` is the revision of an older client's session (docs/mcp.md, Older revisions): its answers
 * take that revision's shapes; null for a 2026-07-28 request. A `notify` without `members` is taken
 * by the gateway alone (an older client's `notifications/initialized`).
 */
export type Plan =
  | { kind: "own"; answer: OwnAnswer }
  | { kind: "routed"; member: Member; name: string; body: Buffer; client: string | null }
  | { kind: "fanout"; method: string; message: Json; client: string | null }
  | { kind: "notify"; body: Buffer; members: boolean }
  | { kind: "listen"; message: Json }
  /** An older client's answer to a member's relayed request: to that member (`relays.ts`). */
  | ReplyPlan
  /** An older client's GET stream: its members' streams merged (`relays.ts`). */
  | StreamPlan
  | TaskPlan
  | {
      kind: "search";
      message: Json;
      /** Null: the `tools/list`; else the `search_tools` call's arguments. */
      search: SearchArgs | null;
      client: string | null;
    };

/** The caller's headers a virtual server reads (null when absent), and who asks. */
export type RequestHeaders = {
  readonly protocolVersion: string | null;
  readonly sessionId?: string | null;
  /** Who asks, for older clients' session ids; absent: older revisions are not served. */
  readonly session?: SessionContext | null;
};

/**
 * Plans a request. `body` is the JSON-RPC message step 5 already parsed as one message;
 * `headers` the caller's that the revision looks at. Cheap and calls nothing: the
 * forward step settles a priced call before any member is dialled.
 */
export function planRequest(server: VirtualServer, body: Buffer, headers: RequestHeaders): Plan {
  const { protocolVersion } = headers;
  let msg: unknown;
  try {
    msg = JSON.parse(body.toString("utf8"));
  } catch {
    // Step 5 parsed it already; a body that is not JSON here is still answered, never thrown.
    return { kind: "own", answer: rpcError(400, null, ERRORS.parse, "Parse error") };
  }
  if (isRecord(msg) && typeof msg.method !== "string") {
    const reply = planReply(
      server,
      msg,
      { protocolVersion, sessionId: headers.sessionId ?? null },
      headers.session,
    );
    if (reply) return reply;
  }
  if (!isRecord(msg) || typeof msg.method !== "string") {
    return {
      kind: "own",
      answer: rpcError(
        400,
        null,
        ERRORS.invalidRequest,
        "Bad Request: JSON-RPC responses cannot be posted to this endpoint",
      ),
    };
  }
  const older = planOlder(
    msg as Json & { method: string },
    { protocolVersion, sessionId: headers.sessionId ?? null },
    headers.session ?? null,
  );
  let client: string | null = null;
  if (older) {
    if (older.kind === "own") return older;
    if (older.kind === "accepted") return { kind: "notify", body, members: false };
    if (older.kind === "notify") return { kind: "notify", body, members: true };
    if (older.kind === "initialize")
      return { kind: "fanout", method: "initialize", message: msg, client: older.revision };
    client = older.revision;
  } else {
    if (!("id" in msg)) return { kind: "notify", body, members: true };
    const refused = versionRefusal(msg, protocolVersion);
    if (refused) return { kind: "own", answer: refused };
  }
  const id = requestId(msg);
  const { method } = msg;
  const task = planTask(server, msg, method, client);
  if (task) return task;
  if (!METHODS.has(method) && !(client !== null && OLDER_ONLY_METHODS.has(method)))
    return { kind: "own", answer: rpcError(404, id, ERRORS.methodNotFound, "Method not found") };
  const params = isRecord(msg.params) ? msg.params : {};
  if (server.discovery === "search") {
    if (method === "tools/list") return { kind: "search", message: msg, search: null, client };
    if (method === "tools/call" && params.name === SEARCH_TOOL) {
      const args = searchArgs(id, params);
      if ("status" in args) return { kind: "own", answer: args };
      return { kind: "search", message: msg, search: args, client };
    }
    // A call_tool that step 5 did not turn into the tools/call of its tool: its arguments are wrong.
    if (method === "tools/call" && params.name === CALL_TOOL)
      return { kind: "own", answer: callToolRefusal(id, params) };
  }
  if (method === "tools/call" || method === "prompts/get") {
    const kind = method === "tools/call" ? "tool" : "prompt";
    const route = typeof params.name === "string" ? routeName(server.members, params.name, kind) : null;
    if (!route) return { kind: "own", answer: unknownName(id, kind, params.name) };
    return routed(route.member, route.name, { ...msg, params: { ...params, name: route.name } }, client);
  }
  if (method === "completion/complete" && isRecord(params.ref) && params.ref.type === "ref/prompt") {
    const { ref } = params;
    const route = typeof ref.name === "string" ? routeName(server.members, ref.name, "prompt") : null;
    if (!route) return { kind: "own", answer: unknownName(id, "prompt", ref.name) };
    return routed(
      route.member,
      route.name,
      { ...msg, params: { ...params, ref: { ...ref, name: route.name } } },
      client,
    );
  }
  if (method === "subscriptions/listen") return { kind: "listen", message: msg };
  return { kind: "fanout", method, message: msg, client };
}

function routed(member: Member, name: string, message: Json, client: string | null): Plan {
  return { kind: "routed", member, name, body: Buffer.from(JSON.stringify(message)), client };
}

function unknownName(id: Json["id"], kind: "tool" | "prompt", name: unknown): OwnAnswer {
  const what = kind === "tool" ? "Tool" : "Prompt";
  // The name is the caller's own; it is echoed only when it is a short plain string.
  const shown = typeof name === "string" && name.length <= 256 ? ` ${name}` : "";
  return rpcError(
    200,
    (id ?? null) as string | number | null,
    ERRORS.invalidParams,
    `${what}${shown} not found`,
  );
}
