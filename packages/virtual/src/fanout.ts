import { isRecord } from "@gw/jsonrpc";
import { decodeWalk, encodeWalk, startWalk, type Walk } from "./cursor.ts";
import { initialize } from "./initialize.ts";
import type { Member, VirtualServer } from "./members.ts";
import { cacheHints, exposeItems, LISTS, type ListMethod, mergeCapabilities } from "./merge.ts";
import {
  ERRORS,
  type Json,
  type OwnAnswer,
  REVISION,
  requestId,
  rpcError,
  SERVER_INFO_KEY,
} from "./protocol.ts";

/** A member's answer to one call: its status and JSON-RPC message, or why there is none. */
export type MemberReply =
  | { kind: "answer"; status: number; message: Json | null }
  | {
      kind: "failure";
      reason: "timeout" | "unreachable" | "credential" | "ssrf_blocked" | "invalid_answer" | string;
    };

/**
 * How the virtual server calls a member; the forward step provides it, with the member's
 * upstream, its credential, the dial-time SSRF guard and the retry rules of the method.
 */
export type MemberPort = {
  call: (member: Member, body: Buffer, method: string) => Promise<MemberReply>;
  /** A member that gave no usable answer to a fan-out: logged and counted, the others answer. */
  failed: (member: Member, method: string, reason: string) => void;
};

/** A fan-out's outcome: the merged answer (with the member that served it when one did), or no answer at all. */
export type FanOut =
  | { kind: "answer"; answer: OwnAnswer; servedBy: string | null }
  | { kind: "failure"; reason: "timeout" | "unreachable" };

type Page = { member: Member; result: Json };
type Replies = { pages: Page[]; errors: OwnAnswer[]; failures: string[] };

/** Runs a fan-out method (`server/discover`, the lists, `resources/read`, resource completions). */
export async function fanOut(
  server: VirtualServer,
  method: string,
  msg: Json,
  port: MemberPort,
  /** An older client's revision (an `initialize` answers with it); null: 2026-07-28. */
  client: string | null = null,
): Promise<FanOut> {
  const id = requestId(msg);
  if (method in LISTS) return list(server, method as ListMethod, msg, port);
  if (method === "server/discover") return discover(server, msg, port);
  if (method === "initialize") return initialize(server, msg, client ?? "", port);
  // resources/read and completion/complete of a resource: the members in order, the first good answer wins.
  return firstAnswer(server.members, msg, method, port, id);
}

async function ask(
  members: readonly Member[],
  msg: Json,
  method: string,
  port: MemberPort,
  params?: (m: Member) => Json,
) {
  const replies = await Promise.all(
    members.map((m) => {
      const message = params ? { ...msg, params: params(m) } : msg;
      return port.call(m, Buffer.from(JSON.stringify(message)), method);
    }),
  );
  const out: Replies = { pages: [], errors: [], failures: [] };
  for (const [i, reply] of replies.entries()) {
    const member = members[i] as Member;
    sort(out, member, reply, method, port);
  }
  return out;
}

function sort(out: Replies, member: Member, reply: MemberReply, method: string, port: MemberPort): void {
  if (reply.kind === "failure") {
    port.failed(member, method, reply.reason);
    out.failures.push(reply.reason);
    return;
  }
  const { message } = reply;
  if (message && isRecord(message.result)) out.pages.push({ member, result: message.result });
  else if (message && isRecord(message.error)) out.errors.push({ status: reply.status, message });
  else {
    port.failed(member, method, "invalid_answer");
    out.failures.push("invalid_answer");
  }
}

/** No member answered well: the first member's JSON-RPC error as it sent it, else a failure like any upstream's. */
function noAnswer(r: Replies): FanOut {
  const [error] = r.errors;
  if (error) return { kind: "answer", answer: error, servedBy: null };
  return {
    kind: "failure",
    reason: r.failures.length > 0 && r.failures.every((f) => f === "timeout") ? "timeout" : "unreachable",
  };
}

async function list(server: VirtualServer, method: ListMethod, msg: Json, port: MemberPort): Promise<FanOut> {
  const id = requestId(msg);
  const params = isRecord(msg.params) ? msg.params : {};
  let walk: Walk;
  if (params.cursor === undefined) walk = startWalk(server.members);
  else {
    const decoded = decodeWalk(params.cursor, server.members);
    if (!decoded)
      return {
        kind: "answer",
        answer: rpcError(200, id, ERRORS.invalidParams, "Invalid cursor"),
        servedBy: null,
      };
    walk = decoded;
  }
  const byId = new Map(server.members.map((m) => [m.agentId, m]));
  const members = walk.map((w) => byId.get(w.agentId) as Member);
  const cursors = new Map(walk.map((w) => [w.agentId, w.cursor]));
  const r = await ask(members, msg, method, port, (m) => {
    const own = cursors.get(m.agentId);
    const { cursor: _, ...rest } = params;
    return own === null || own === undefined ? rest : { ...rest, cursor: own };
  });
  if (r.pages.length === 0 && members.length > 0) return noAnswer(r);
  const items: unknown[] = [];
  const next: Walk = [];
  for (const { member, result } of r.pages) {
    items.push(...exposeItems(method, member, result));
    if (typeof result.nextCursor === "string")
      next.push({ agentId: member.agentId, cursor: result.nextCursor });
  }
  const value: Json = { [LISTS[method].key]: items, ...cacheHints(r.pages.map((p) => p.result)) };
  if (next.length > 0) value.nextCursor = encodeWalk(next);
  value._meta = { [SERVER_INFO_KEY]: { name: server.name, version: server.version } };
  return {
    kind: "answer",
    answer: { status: 200, message: { jsonrpc: "2.0", id, result: value } },
    servedBy: null,
  };
}

async function discover(server: VirtualServer, msg: Json, port: MemberPort): Promise<FanOut> {
  const id = requestId(msg);
  const r = await ask(server.members, msg, "server/discover", port);
  if (r.pages.length === 0 && r.errors.length > 0) return noAnswer(r);
  const value: Json = {
    supportedVersions: [REVISION],
    capabilities: mergeCapabilities(r.pages.map((p) => p.result.capabilities)),
    ...cacheHints(r.pages.map((p) => p.result)),
    _meta: { [SERVER_INFO_KEY]: { name: server.name, version: server.version } },
  };
  return {
    kind: "answer",
    answer: { status: 200, message: { jsonrpc: "2.0", id, result: value } },
    servedBy: null,
  };
}

/**
 * The members one after the other until one answers with a result: `resources/read` (URIs are
 * not namespaced, so the first member that has the resource serves it) and the completion of a
 * resource template. A completion result with no values goes on to the next member.
 */
async function firstAnswer(
  members: readonly Member[],
  msg: Json,
  method: string,
  port: MemberPort,
  id: Json["id"],
): Promise<FanOut> {
  const r: Replies = { pages: [], errors: [], failures: [] };
  const body = Buffer.from(JSON.stringify(msg));
  let empty: Page | null = null;
  for (const member of members) {
    const before = r.pages.length;
    sort(r, member, await port.call(member, body, method), method, port);
    const page = r.pages[before];
    if (!page) continue;
    if (method !== "completion/complete" || hasValues(page.result)) return served(page, id);
    empty ??= page;
  }
  if (empty) return served(empty, id);
  return noAnswer(r);
}

function served(page: Page, id: Json["id"]): FanOut {
  return {
    kind: "answer",
    answer: { status: 200, message: { jsonrpc: "2.0", id, result: page.result } },
    servedBy: page.member.agentId,
  };
}

function hasValues(result: Json): boolean {
  const completion = isRecord(result.completion) ? result.completion : {};
  return Array.isArray(completion.values) && completion.values.length > 0;
}

/** A notification goes to every member; whatever they answer, the caller gets 202. */
export async function notifyAll(
  server: VirtualServer,
  body: Buffer,
  method: string,
  port: MemberPort,
): Promise<void> {
  await Promise.all(server.members.map((m) => port.call(m, body, method)));
}
