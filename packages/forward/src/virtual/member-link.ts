import type { IncomingHttpHeaders } from "node:http";
import { isRecord, parseJson } from "@gw/jsonrpc";
import type { Logger } from "@gw/telemetry";
import {
  GATEWAY_ENVELOPE,
  isOlderRevision,
  isStateless,
  type Json,
  type Member,
  OLDER_REVISIONS,
  REVISION,
} from "@gw/virtual";
import type { ForwardCall } from "../call.ts";
import {
  dialOnOwnBehalf,
  type GatewayCallDeps,
  GatewayCredentialError,
  type GatewayDial,
} from "../gateway-call.ts";
import { mcpPost } from "../mcp-post.ts";

/**
 * How the gateway speaks to one member of a virtual server (docs/mcp.md, Older revisions):
 * 2026-07-28 (stateless), or an older revision through a member session the gateway opened
 * (`sessionId` null when the member issues none), with what its `initialize` answered.
 */
export type Link =
  | { readonly kind: "stateless" }
  | {
      readonly kind: "session";
      readonly revision: string;
      readonly sessionId: string | null;
      readonly init: Json;
    };

/** Why a member's revision or session could not be settled: nothing else was sent to it. */
export class LinkError extends Error {
  override name = "LinkError";
  constructor(readonly reason: string) {
    super(`member handshake failed: ${reason}`);
  }
}

/** The handshake (probe, initialize, initialized) is bounded by this, or the call's own time-out when shorter. */
export const HANDSHAKE_DEADLINE_MS = 10_000;
const ANSWER_MAX_BYTES = 1024 * 1024;
const MAX_LINKS = 10_000;

/**
 * The links of this process, per member agent as last written (a write forgets what was learnt:
 * its key changes). A settled link is read synchronously on the hot path; one handshake at a time
 * per member; a handshake that failed is not kept (the next call tries again).
 */
const settled = new Map<string, Link>();
const pending = new Map<string, Promise<Link>>();

function keyOf(member: Member): string {
  return `${member.agentId}\u0000${member.writtenAt ?? 0}`;
}

/** The member's link when this process already knows it (no await on the hot path). */
export function knownLink(member: Member): Link | undefined {
  if (member.revision && isStateless(member.revision)) return STATELESS;
  return settled.get(keyOf(member));
}

const STATELESS: Link = { kind: "stateless" };

/**
 * The member's link: known, or settled now (once per member: the probe, then for an older member
 * its session). `stale` names a session the member refused (404): a new one is opened unless
 * another call already did.
 */
export function linkOf(
  member: Member,
  call: ForwardCall,
  deps: GatewayCallDeps,
  log: Logger,
  stale?: Link,
): Promise<Link> {
  const key = keyOf(member);
  const known = settled.get(key);
  if (known && known !== stale) return Promise.resolve(known);
  if (stale && known === stale) settled.delete(key);
  const inFlight = pending.get(key);
  if (inFlight) return inFlight;
  const opening = handshake(member, call, deps, log, stale).then((link) => {
    forget(member.agentId);
    if (settled.size >= MAX_LINKS) settled.delete(settled.keys().next().value as string);
    settled.set(key, link);
    return link;
  });
  pending.set(key, opening);
  const clear = () => pending.delete(key);
  opening.then(clear, clear);
  return opening;
}

/** Whatever was learnt of the member under an earlier write. */
function forget(agentId: string): void {
  for (const key of settled.keys()) if (key.startsWith(`${agentId}\u0000`)) settled.delete(key);
}

async function handshake(
  member: Member,
  call: ForwardCall,
  deps: GatewayCallDeps,
  log: Logger,
  stale: Link | undefined,
): Promise<Link> {
  const dial = await dialOnOwnBehalf({
    agent: {
      tenantId: call.tenantId,
      agentId: member.agentId,
      upstreamUrl: `${member.target.origin}${member.target.path}`,
      credentialRef: member.credentialRef,
    },
    deps,
    subjectToken: call.subjectToken(),
    // A member behind a per-user credential is probed with the caller's own grant.
    sub: call.sub,
    deadlineMs: Math.min(HANDSHAKE_DEADLINE_MS, deps.config.GW_TRANSACT_TIMEOUT_MS),
    log,
  }).catch((e) => {
    if (e instanceof GatewayCredentialError) throw new LinkError("credential");
    throw e;
  });
  const fixed = member.revision ?? (stale?.kind === "session" ? stale.revision : null);
  if (fixed && isStateless(fixed)) return STATELESS;
  if (!fixed && (await speaksStateless(dial))) return STATELESS;
  const revisions = fixed ? [fixed] : OLDER_REVISIONS;
  let last = "unsupported_revision";
  for (const revision of revisions) {
    const init = await post(dial, { id: 0, method: "initialize", params: initParams(revision) }, {});
    if (!init.message) throw new LinkError(init.reason);
    const result = init.message.result;
    if (!isRecord(result)) {
      last = "initialize_refused";
      continue;
    }
    const agreed = isOlderRevision(result.protocolVersion) ? result.protocolVersion : null;
    if (!agreed) throw new LinkError("unsupported_revision");
    const sid = init.headers["mcp-session-id"];
    const sessionId = typeof sid === "string" && sid !== "" ? sid : null;
    const headers: Record<string, string> = { "mcp-protocol-version": agreed };
    if (sessionId) headers["mcp-session-id"] = sessionId;
    await post(dial, { method: "notifications/initialized" }, headers);
    return { kind: "session", revision: agreed, sessionId, init: result };
  }
  throw new LinkError(last);
}

function initParams(revision: string): Json {
  return { protocolVersion: revision, capabilities: {}, clientInfo: { name: "agent-gateway", version: "1" } };
}

/**
 * The probe: `server/discover` of 2026-07-28. A result: the member speaks it. An unsupported-version
 * error, a 4xx or -32601: an older member. Anything else (unreachable, time-out, garbage) fails the
 * handshake.
 */
async function speaksStateless(dial: GatewayDial): Promise<boolean> {
  const probe = await post(
    dial,
    { id: 0, method: "server/discover", params: { _meta: GATEWAY_ENVELOPE } },
    { "mcp-protocol-version": REVISION, "mcp-method": "server/discover" },
  );
  if (probe.message && isRecord(probe.message.result)) return true;
  if (probe.status >= 400 && probe.status < 500) return false;
  const error = probe.message && isRecord(probe.message.error) ? probe.message.error : null;
  if (error && (error.code === -32022 || error.code === -32601)) return false;
  throw new LinkError(probe.message ? "probe_refused" : probe.reason);
}

type Posted = {
  status: number;
  headers: IncomingHttpHeaders;
  message: Json | null;
  reason: string;
};

/** One JSON-RPC message to the member over the gateway's own dial; its answer (JSON or SSE) read capped. */
async function post(
  dial: GatewayDial,
  message: { id?: number; method: string; params?: Json },
  headers: Record<string, string>,
): Promise<Posted> {
  const res = await mcpPost(dial, message, headers, {
    maxBytes: ANSWER_MAX_BYTES,
    retryable: message.method !== "notifications/initialized",
  });
  if (res.kind === "failure") throw new LinkError(res.failure);
  const parsed = res.text === null ? null : parseJson(res.text);
  const ok = isRecord(parsed) && parsed.jsonrpc === "2.0";
  return {
    status: res.status,
    headers: res.headers,
    message: ok ? (parsed as Json) : null,
    reason: message.id === undefined ? "" : "invalid_answer",
  };
}
