import { DomainError, invalid, unprocessable } from "@gw/core";
import type { AgentRow } from "@gw/db";
import { type JsonObject, parseJson } from "@gw/jsonrpc";
import type { Runtime } from "@gw/runtime";
import { readCapped } from "@gw/upstream";
import { canonicalJson } from "@gw/verifier";
import { dialOnOwnBehalf, GatewayCredentialError } from "./gateway-call.ts";
import { rewriteAgentCard, signedCardContent } from "./protocols/a2a/card.ts";

/** How long a card is served from this process's cache before the upstream is asked again. */
export const AGENT_CARD_CACHE_MS = 5 * 60_000;
/** An upstream card larger than this is refused (502). */
export const AGENT_CARD_MAX_BYTES = 1024 * 1024;
/** The whole upstream fetch: connect, answer and body. */
const FETCH_DEADLINE_MS = 10_000;
/** Cards kept per process; the oldest entry goes first beyond it. */
const MAX_ENTRIES = 1_000;
/** The A2A version header a client sends when it reads a card (the v0.3 shape without it). */
const VERSION_HEADER = "a2a-version";

export type AgentCards = {
  /**
   * The card the gateway serves for an A2A agent of the caller's tenant (docs/a2a.md, The agent
   * card): the upstream's, fetched through step 9's credential opening and dial, rewritten to the
   * gateway's JSON-RPC interface and signed when receipts are on. 502 `agent card unavailable`
   * when the upstream's cannot be had.
   */
  card(
    agent: AgentRow,
    caller: { version: string | undefined; subjectToken: string | undefined },
  ): Promise<JsonObject>;
};

type Entry = { expires: number; card: Promise<JsonObject> };

/**
 * Cards cached per process for AGENT_CARD_CACHE_MS per (agent, A2A version asked), concurrent
 * requests sharing one fetch; a write to the agent drops its cards at once (the change bus, also
 * from other replicas). A failed fetch is not cached.
 */
export function createAgentCards(
  rt: Pick<
    Runtime,
    "store" | "keyring" | "oauth" | "dispatcher" | "config" | "receipts" | "changes" | "logger"
  >,
): AgentCards {
  const entries = new Map<string, Entry>();
  rt.changes.subscribe((change) => {
    if (change.kind !== "agent") return;
    const prefix = `${change.tenantId}/${change.id ?? ""}`;
    for (const key of entries.keys()) if (key.startsWith(prefix)) entries.delete(key);
  });
  return {
    card(agent, caller) {
      if (agent.protocol !== "a2a") throw invalid("an agent card is served for protocol a2a agents only");
      if (agent.upstreamUrl === null) throw unprocessable("agent has no upstream_url");
      const version = caller.version?.slice(0, 32) ?? "";
      const key = `${agent.tenantId}/${agent.id}/${version}`;
      const hit = entries.get(key);
      if (hit && hit.expires > Date.now()) return hit.card;
      const card = fetchCard(rt, agent, version, caller.subjectToken);
      entries.delete(key);
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
      entries.set(key, { expires: Date.now() + AGENT_CARD_CACHE_MS, card });
      card.catch(() => {
        if (entries.get(key)?.card === card) entries.delete(key);
      });
      return card;
    },
  };
}

async function fetchCard(
  rt: Parameters<typeof createAgentCards>[0],
  agent: AgentRow,
  version: string,
  subjectToken: string | undefined,
): Promise<JsonObject> {
  const cardUrl = agent.cardUrl ?? new URL("/.well-known/agent-card.json", agent.upstreamUrl as string).href;
  let text: string | null = null;
  try {
    const dial = await dialOnOwnBehalf({
      agent: {
        tenantId: agent.tenantId,
        agentId: agent.id,
        upstreamUrl: cardUrl,
        credentialRef: agent.credentialRef,
      },
      deps: rt,
      subjectToken,
      deadlineMs: FETCH_DEADLINE_MS,
      log: rt.logger,
    });
    const headers: Record<string, string> = { accept: "application/json" };
    if (version !== "") headers[VERSION_HEADER] = version;
    const answer = await dial.request({ method: "GET", headers, body: null, retryable: true }, async (a) =>
      a.status >= 200 && a.status < 300 ? readCapped(a.body, AGENT_CARD_MAX_BYTES) : null,
    );
    if (answer.kind !== "failure" && answer.body) text = answer.body.toString("utf8");
  } catch (e) {
    if (!(e instanceof GatewayCredentialError)) throw e;
  }
  const card = text === null ? null : rewriteAgentCard(parseJson(text), cardAuth(rt, agent.id));
  if (card === null) {
    rt.logger.warn({ agent_id: agent.id }, "agent card unavailable");
    throw new DomainError("bad_gateway", "agent card unavailable");
  }
  if (!rt.receipts) return card;
  // The gateway vouches for the card it serves: a JWS over its RFC 8785 canonical JSON.
  const signature = await rt.receipts.signDetached(canonicalJson(signedCardContent(card)), {
    typ: "JOSE",
    jku: `${rt.config.publicUrl}/v1/receipts/jwks`,
  });
  return { ...card, signatures: [signature] };
}

function cardAuth(rt: Pick<Runtime, "config">, agentId: string) {
  return {
    url: `${rt.config.publicUrl}/v1/proxy/${agentId}/stream`,
    authorizationServers: rt.config.GW_OAUTH_AUTHORIZATION_SERVERS,
  };
}
