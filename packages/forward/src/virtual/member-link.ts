import type { IncomingHttpHeaders } from "node:http";
import { isRecord, parseJson } from "@gw/jsonrpc";
import type { Logger } from "@gw/telemetry";
import { PER_USER_KIND } from "@gw/vault";
import {
  capabilitiesOf,
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
 * its key changes) and, for a member whose credential is per-user (docs/connections.md), per
 * caller: an older member's session is opened with the caller's own grant and serves that caller
 * only, never another person's call. A settled link is read synchronously on the hot path; one
 * handshake at a time per key; a handshake that failed is not kept (the next call tries again).
 */
const settled = new Map<string, Link>();
const pending = new Map<string, Promise<Link>>();
/**
 * Per member as last written: whether its credential is per-user, and until when that is
 * trusted (a credential's kind may change on rotation; re-read through the kind cache after).
 */
const perUser = new Map<string, { yes: boolean; until: number }>();
const PER_USER_TTL_MS = 30_000;

function memberKeyOf(member: Member): string {
  return `${member.agentId}\u0000${member.writtenAt ?? 0}`;
}

/**
 * The link's key: the member's, the caller's sub when its credential is per-user, and the client
 * capabilities the session relays (a pool per set: docs/mcp.md, Server-initiated messages).
 */
function keyOf(member: Member, caller: string | null, relays = ""): string {
  const key = memberKeyOf(member);
  const base = caller === null ? key : `${key}\u0000${caller}`;
  return relays === "" ? base : `${base}\u0000r:${relays}`;
}

/** Whose link the call uses: the caller's (per-user credential), nobody's (null), or not known yet. */
function callerOf(member: Member, call: ForwardCall): string | null | undefined {
  const known = perUser.get(memberKeyOf(member));
  if (!known || known.until <= Date.now()) return undefined;
  return known.yes ? (call.sub ?? "") : null;
}

async function learnCaller(member: Member, call: ForwardCall, deps: GatewayCallDeps): Promise<string | null> {
  const kind = member.credentialRef
    ? await deps.oauth.kindOf(deps.store.db, call.tenantId, member.credentialRef)
    : undefined;
  if (perUser.size >= MAX_LINKS) perUser.clear();
  const yes = kind === PER_USER_KIND;
  perUser.set(memberKeyOf(member), { yes, until: Date.now() + PER_USER_TTL_MS });
  return yes ? (call.sub ?? "") : null;
}

/** The member's link when this process already knows it for this caller (no await on the hot path). */
export function knownLink(member: Member, call: ForwardCall): Link | undefined {
  if (member.revision && isStateless(member.revision)) return STATELESS;
  const caller = callerOf(member, call);
  return caller === undefined ? undefined : settled.get(keyOf(member, caller, call.relays));
}

const STATELESS: Link = { kind: "stateless" };

/**
 * The member's link: known, or settled now (once per member, or per member and caller for a
 * per-user credential: the probe, then for an older member its session). `stale` names a session
 * the member refused (404): a new one is opened unless another call already did.
 */
export async function linkOf(
  member: Member,
  call: ForwardCall,
  deps: GatewayCallDeps,
  log: Logger,
  stale?: Link,
): Promise<Link> {
  const caller = callerOf(member, call) ?? (await learnCaller(member, call, deps));
  const key = keyOf(member, caller, call.relays);
  const known = settled.get(key);
  if (known && known !== stale) return known;
  if (stale && known === stale) settled.delete(key);
  const inFlight = pending.get(key);
  if (inFlight) return inFlight;
  const opening = handshake(member, call, deps, log, stale).then((link) => {
    forget(member);
    if (settled.size >= MAX_LINKS) settled.delete(settled.keys().next().value as string);
    settled.set(key, link);
    return link;
  });
  pending.set(key, opening);
  const clear = () => pending.delete(key);
  opening.then(clear, clear);
  return opening;
}

/** Whatever was learnt of the member under an earlier write (every caller's links of it). */
function forget(member: Member): void {
  const prefix = `${member.agentId}\u0000`;
  const current = memberKeyOf(member);
  for (const key of settled.keys()) {
    if (key.startsWith(prefix) && key !== current && !key.startsWith(`${current}\u0000`)) settled.delete(key);
  }
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
    const params = initParams(revision, call.relays ?? "");
    const init = await post(dial, { id: 0, method: "initialize", params }, {});
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

/** The member session declares the client capabilities it relays, so the member asks only what is answered. */
function initParams(revision: string, relays: string): Json {
  const capabilities = capabilitiesOf(relays);
  return { protocolVersion: revision, capabilities, clientInfo: { name: "agent-gateway", version: "1" } };
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
