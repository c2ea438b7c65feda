import { isRecord } from "@gw/jsonrpc";
import type { MemberIds } from "./member-id.ts";
import type { Member, VirtualServer } from "./members.ts";
import type { SessionContext } from "./older.ts";
import { isOlderSpoken } from "./older.ts";
import { ERRORS, type Json, type OwnAnswer, rpcError } from "./protocol.ts";

/**
 * Server-initiated messages through a virtual server (docs/mcp.md, Server-initiated messages):
 * what an older member may ask its client is what the client can answer. The client capabilities
 * the gateway relays are elicitation (with its modes), sampling and roots; a member session is
 * opened per set of them, declaring that set in its `initialize`, so a member asks only a client
 * that can answer. The set travels in the client's signed session id as a canonical string.
 */
export type Relays = string;

/** The requests an older member may send its client that the gateway relays. */
export const RELAYED_REQUESTS = new Set(["sampling/createMessage", "elicitation/create", "roots/list"]);

/** The relayed set of an older client's `initialize` capabilities, canonical ("" for none). */
export function relaysOf(capabilities: unknown): Relays {
  if (!isRecord(capabilities)) return "";
  const parts: string[] = [];
  const { elicitation } = capabilities;
  if (isRecord(elicitation)) {
    // An empty elicitation object is form mode (2025-06-18's only mode).
    const modes = ["form", "url"].filter((m) => isRecord(elicitation[m]));
    parts.push(`elicitation:${(modes.length > 0 ? modes : ["form"]).join("+")}`);
  }
  if (isRecord(capabilities.roots)) parts.push("roots");
  if (isRecord(capabilities.sampling)) parts.push("sampling");
  return parts.join(";");
}

/** The client capabilities a member session of `relays` declares in its `initialize`. */
export function capabilitiesOf(relays: Relays): Json {
  const out: Json = {};
  for (const part of relays === "" ? [] : relays.split(";")) {
    const [name, modes] = part.split(":");
    if (name === "elicitation") {
      const set = (modes ?? "form").split("+");
      // Form mode alone is declared as an empty object: what 2025-06-18 members understand.
      out.elicitation =
        set.length === 1 && set[0] === "form" ? {} : Object.fromEntries(set.map((m) => [m, {}]));
    } else if (name === "roots" || name === "sampling") out[name] = {};
  }
  return out;
}

/** A relayed request's answer the client posts back: where it goes. */
export type ReplyPlan = {
  kind: "reply";
  member: Member;
  /** The member's session the request came on ("" when the member gave none). */
  memberSession: string;
  /** The older client's revision (the member session's, as far as the gateway knows). */
  client: string;
  /** The client's response with the member's own id back in it. */
  body: Buffer;
};

/**
 * A JSON-RPC response an older client posts (an answer to a relayed request): its gateway id must
 * be one this gateway issued for this tenant and agent, naming one of its members; anything else
 * is an unknown session's message (404). Null: not a response of an older client's session.
 */
export function planReply(
  server: VirtualServer,
  msg: Json,
  headers: { protocolVersion: string | null; sessionId: string | null },
  context: SessionContext | null | undefined,
): ReplyPlan | { kind: "own"; answer: OwnAnswer } | null {
  if (!("result" in msg) && !("error" in msg)) return null;
  if (!context?.members || !isOlderSpoken(headers.protocolVersion)) return null;
  if (headers.sessionId === null) {
    return {
      kind: "own",
      answer: rpcError(400, null, ERRORS.serverError, "Bad Request: Mcp-Session-Id header is required"),
    };
  }
  const session = context.sessions.verify(headers.sessionId);
  const own = session && verifyOwn(context.members, msg.id, context);
  const member = own ? server.members.find((m) => m.agentId === own.member) : undefined;
  if (
    !session ||
    session.tenantId !== context.tenantId ||
    session.agentId !== context.agentId ||
    !own ||
    !member
  )
    return { kind: "own", answer: rpcError(404, null, SESSION_NOT_FOUND, "Session not found") };
  return {
    kind: "reply",
    member,
    memberSession: own.memberSession,
    client: session.revision,
    body: Buffer.from(JSON.stringify({ ...msg, id: own.id })),
  };
}

function verifyOwn(ids: MemberIds, id: unknown, context: SessionContext) {
  return ids.verify("request", id, context.tenantId, context.agentId);
}

/** An older client's `GET` on the stream path: its members' GET streams merged (`relay-stream.ts`). */
export type StreamPlan = { kind: "stream"; client: string; relays: Relays };

/**
 * An older client's `GET` of its session's stream (docs/mcp.md, Server-initiated messages): a
 * session id this gateway issued to this agent opens the merged stream; any other is unknown (404);
 * none is the revision's 400.
 */
export function openStream(
  sessionId: string | null,
  context: SessionContext,
): StreamPlan | { kind: "own"; answer: OwnAnswer } {
  if (sessionId === null) {
    return {
      kind: "own",
      answer: rpcError(400, null, ERRORS.serverError, "Bad Request: Mcp-Session-Id header is required"),
    };
  }
  const claims = context.sessions.verify(sessionId);
  if (!claims || claims.tenantId !== context.tenantId || claims.agentId !== context.agentId)
    return { kind: "own", answer: rpcError(404, null, SESSION_NOT_FOUND, "Session not found") };
  return { kind: "stream", client: claims.revision, relays: claims.relays ?? "" };
}

/** Older revisions' methods a virtual server serves besides 2026-07-28's: to the member serving the URI. */
export const OLDER_ONLY_METHODS = new Set(["resources/subscribe", "resources/unsubscribe"]);

/** The code the official SDKs answer an unknown session with. */
const SESSION_NOT_FOUND = -32001;
