import { LIMITS } from "@gw/core";
import { firstLine, isEventStream, isRecord, parseJson } from "@gw/jsonrpc";
import type { Logger } from "@gw/telemetry";
import { recordVirtualMemberFailure } from "@gw/telemetry";
import { Cancel, readCapped } from "@gw/upstream";
import { redactSecret } from "@gw/vault";
import type { Json, Member, MemberPort, MemberReply, MemberStream, OwnAnswer } from "@gw/virtual";
import { answerReader } from "../answer/collect.ts";
import type { ForwardCall } from "../call.ts";
import { openCallCredential } from "../credential.ts";
import type { ForwardDeps } from "../deps.ts";
import { dialCollect, dialStream } from "../dial.ts";
import { memberCall } from "../target.ts";
import { asSent, discoveredFrom, linkedBody, linkedCall, mcpNameOf } from "./member-adapt.ts";
import { knownLink, type Link, LinkError, linkOf } from "./member-link.ts";
import { sessionsOf } from "./session-key.ts";

/** A member's answer is at most this large when it is read whole to be merged. */
const MEMBER_ANSWER_MAX_BYTES = LIMITS.virtualMemberAnswerMaxBytes;

/**
 * How a virtual server calls its members on this call: each member call is an upstream call of
 * the member (its upstream_url with the dial-time SSRF guard, its credential opened towards its
 * host, the retry rules of the method, the transactional time-out), read whole. A member that
 * fails is logged with its agent id and counted (`gw.virtual.member_failures`).
 */
export function memberPort(
  call: ForwardCall,
  deps: ForwardDeps,
  log: Logger,
  /** An older client's revision (docs/mcp.md, Older revisions); null: 2026-07-28. */
  client: string | null = null,
): MemberPort {
  // An older client's member calls use the member sessions of its relayed capabilities (relays.ts).
  call = client === null ? call : withRelays(call, deps);
  return {
    call: async (member, body, method) => {
      const known = knownLink(member, call);
      let link: Link;
      try {
        link = known ?? (await linkOf(member, call, deps, log));
      } catch (e) {
        if (e instanceof LinkError) return { kind: "failure", reason: e.reason };
        throw e;
      }
      if (link.kind === "session" && method === "server/discover") {
        return { kind: "answer", status: 200, message: discoveredFrom(link, requestIdOf(body)) };
      }
      const first = await callOnce(call, member, link, body, method, client, deps, log);
      // An older member's session that expired (404): a new one, and the request once more.
      if (link.kind !== "session" || first.kind !== "answer" || first.status !== 404) return first;
      try {
        link = await linkOf(member, call, deps, log, link);
      } catch (e) {
        if (e instanceof LinkError) return { kind: "failure", reason: e.reason };
        throw e;
      }
      const second = await callOnce(call, member, link, body, method, client, deps, log);
      // Bounded: a member that drops its session again gets no third try.
      return second.kind === "answer" && second.status === 404
        ? { kind: "failure", reason: "session_lost" }
        : second;
    },
    failed: (member, method, reason) => {
      log.warn(
        { invocation_id: call.invocationId, member_agent_id: member.agentId, mcp_method: method, reason },
        "virtual server member gave no usable answer",
      );
      recordVirtualMemberFailure({ memberAgentId: member.agentId, method, reason });
    },
  };
}

/** One member call: step 9's dial of the member, in the member's revision. */
async function callOnce(
  call: ForwardCall,
  member: Member,
  link: Link,
  body: Buffer,
  method: string,
  client: string | null,
  deps: ForwardDeps,
  log: Logger,
): Promise<MemberReply> {
  let mcall = memberCall(call, member, null, method);
  let sent = body;
  if (!asSent(link, client)) {
    mcall = linkedCall(mcall, link, method, link.kind === "stateless" ? mcpNameOf(body, method) : null);
    sent = linkedBody(body, link, client);
  }
  const credential = await openCallCredential(mcall, member.target.host, deps, { log });
  if (credential === "refused") return { kind: "failure", reason: "credential" };
  const read = answerReader(mcall);
  const result = await dialCollect(mcall, member.target, credential, sent, read, deps);
  if (result.kind === "failure") return { kind: "failure", reason: result.failure };
  if (!result.body.ok) return { kind: "failure", reason: result.body.failure };
  // A notification's 202 has no body: an answer all the same.
  if (result.body.body.length === 0) return { kind: "answer", status: result.status, message: null };
  const text = redactSecret(result.body.body, credential?.secret ?? "");
  return { kind: "answer", status: result.status, message: jsonRpc(Buffer.from(text)) };
}

function withRelays(call: ForwardCall, deps: ForwardDeps): ForwardCall {
  if (call.relays !== undefined) return call;
  const sessionId = headerOf(call.headers, "mcp-session-id");
  const relays = sessionId ? sessionsOf(deps.config).verify(sessionId)?.relays : undefined;
  return relays ? { ...call, relays } : call;
}

function headerOf(raw: readonly string[], name: string): string | null {
  for (let i = 0; i + 1 < raw.length; i += 2)
    if ((raw[i] as string).toLowerCase() === name) return raw[i + 1] as string;
  return null;
}

function requestIdOf(body: Buffer): unknown {
  const msg = parseJson(body.toString("utf8"));
  return isRecord(msg) ? msg.id : null;
}

/** A member's JSON-RPC message, or null when its answer is empty or not one. */
function jsonRpc(body: Buffer): Json | null {
  if (body.length === 0) return null;
  const msg = parseJson(body.toString("utf8"));
  return isRecord(msg) && msg.jsonrpc === "2.0" ? msg : null;
}

/** What opening the members' `subscriptions/listen` streams gave: the open streams, and the members' other answers. */
export type Opened = { streams: MemberStream[]; answers: OwnAnswer[] };

/**
 * Opens every member's `subscriptions/listen` stream (a streaming upstream call each: first-byte
 * and idle time-outs, cancelled with the caller). An answer that is not an event stream (a member
 * refusing the subscription) is read whole and kept; a member that cannot be reached is logged.
 */
export async function openListens(
  call: ForwardCall,
  members: readonly Member[],
  body: Buffer,
  port: MemberPort,
  deps: ForwardDeps,
  log: Logger,
): Promise<Opened> {
  const opened = await Promise.all(
    members.map(async (member) => {
      // An older member has no subscriptions/listen: it adds no stream (docs/mcp.md, Older revisions).
      const link = knownLink(member, call) ?? (await linkOf(member, call, deps, log).catch(() => null));
      if (link?.kind === "session") return undefined;
      const mcall = memberCall(call, member, null, "subscriptions/listen");
      const credential = await openCallCredential(mcall, member.target.host, deps, { log });
      if (credential === "refused") return port.failed(member, "subscriptions/listen", "credential");
      const cancel = new Cancel();
      const res = await dialStream(mcall, member.target, credential, body, cancel, deps);
      if (res.kind === "failure") return port.failed(member, "subscriptions/listen", res.failure);
      const opened = await listenOf(res.res, () => cancel.abort());
      if (opened === null) return port.failed(member, "subscriptions/listen", "invalid_answer");
      return opened;
    }),
  );
  const out: Opened = { streams: [], answers: [] };
  for (const o of opened) {
    if (!o) continue;
    if ("body" in o) out.streams.push(o);
    else out.answers.push(o);
  }
  return out;
}

/**
 * A member's answer to `subscriptions/listen`: its stream (server-sent events, or a streamed JSON
 * body whose first line is a notification, the acknowledgement), else its one JSON-RPC answer
 * (a refusal), else null.
 */
async function listenOf(
  res: { statusCode: number; headers: Record<string, unknown>; body: AsyncIterable<Buffer> },
  close: () => void,
): Promise<MemberStream | OwnAnswer | null> {
  const type = res.headers["content-type"];
  const ok = res.statusCode < 300;
  if (ok && isEventStream(typeof type === "string" ? type : null))
    return { body: res.body, format: "sse", close };
  if (ok) {
    // The acknowledgement is one line; a member whose first line never ends is held at most so much.
    const { first, rest } = await firstLine(res.body, MEMBER_ANSWER_MAX_BYTES).catch(() => ({
      first: "",
      rest: res.body,
    }));
    const head = jsonRpc(Buffer.from(first));
    if (head && typeof head.method === "string") return { body: rest, format: "lines", close };
    close();
    return head ? { status: res.statusCode, message: head } : null;
  }
  const whole = await readCapped(res.body, MEMBER_ANSWER_MAX_BYTES).catch(() => null);
  close();
  const message = whole ? jsonRpc(whole) : null;
  return message ? { status: res.statusCode, message } : null;
}
