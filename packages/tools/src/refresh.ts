import type { AgentsCtx } from "@gw/agents";
import { DomainError } from "@gw/core";
import { dialOnOwnBehalf, type GatewayCallDeps, GatewayCredentialError, type GatewayDial } from "@gw/forward";
import type { Logger } from "@gw/telemetry";
import type { CredentialFailure } from "@gw/vault";
import { resultOf, toolPageOf } from "./answer.ts";
import type { ToolCatalog } from "./catalog.ts";
import { mcpEnd, mcpRequest, RefreshError } from "./exchange.ts";
import { listTools, mcpAgent } from "./tools.ts";

/** The revision whose servers are stateless: one request per page, no initialize, no session. */
export const STATELESS_REVISION = "2026-07-28";
/** Older servers are initialized with the agent's revision, or this one. */
const DEFAULT_REVISION = "2025-06-18";
/** A refresh reads at most this many pages, and gives up after REFRESH_DEADLINE_MS. */
const MAX_PAGES = 100;
export const REFRESH_DEADLINE_MS = 15_000;

/** Step 9's credential opening and dial (`dialOnOwnBehalf`), and the catalog that learns. */
export type RefreshDeps = GatewayCallDeps & { catalog: ToolCatalog; log?: Logger | undefined };

const ANSWERS = {
  unreachable: ["bad_gateway", "upstream unreachable"],
  timeout: ["gateway_timeout", "upstream timed out"],
  ssrf_blocked: ["bad_gateway", "upstream address is not allowed"],
  bad_answer: ["bad_gateway", "the upstream did not answer tools/list as an MCP server"],
} as const;

/**
 * POST /v1/agents/{id}/tools/refresh: the gateway lists the server's tools itself, every page (at
 * most MAX_PAGES, within REFRESH_DEADLINE_MS, each answer at most 8 MiB), and learns them as a
 * complete list when the walk ended. It opens the agent's credential and dials as step 9 does
 * (`dialOnOwnBehalf`: OAuth tokens, the dial-time SSRF guard, the CA file, no redirects). A
 * token-exchange credential exchanges `subjectToken`, the refreshing caller's own bearer token, as
 * if they had called the agent. A 2026-07-28 server gets one stateless request per page; an older
 * one initialize, notifications/initialized, the pages, then DELETE of its session.
 */
export async function refreshTools({
  ctx,
  agentId,
  deps,
  subjectToken,
}: {
  ctx: AgentsCtx;
  agentId: string;
  deps: RefreshDeps;
  /** The bearer token of the caller asking for the refresh. */
  subjectToken?: string | undefined;
}) {
  const agent = await mcpAgent({ ctx, agentId });
  if (!agent.upstreamUrl) throw new DomainError("unprocessable", "agent has no upstream_url");
  const c = await dialOnOwnBehalf({
    agent: {
      tenantId: ctx.tenantId,
      agentId,
      upstreamUrl: agent.upstreamUrl,
      credentialRef: agent.credentialRef,
    },
    deps,
    subjectToken,
    deadlineMs: REFRESH_DEADLINE_MS,
    log: deps.log,
  }).catch((e) => {
    if (e instanceof GatewayCredentialError) throw credentialRefusal(e.reason);
    throw e;
  });
  const revision = agent.mcpProtocolVersion ?? DEFAULT_REVISION;
  let complete = false;
  try {
    complete =
      revision >= STATELESS_REVISION
        ? await walk(c, { "mcp-protocol-version": revision }, ctx.tenantId, agentId, deps.catalog, true)
        : await session(c, revision, ctx.tenantId, agentId, deps.catalog);
  } catch (e) {
    if (!(e instanceof RefreshError)) throw e;
    const [kind, message] = ANSWERS[e.failure];
    throw new DomainError(kind, message);
  }
  return { ...(await listTools({ ctx, agentId })), complete };
}

async function session(
  c: GatewayDial,
  revision: string,
  tenantId: string,
  agentId: string,
  catalog: ToolCatalog,
) {
  const init = await mcpRequest(
    c,
    {
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: revision,
        capabilities: {},
        clientInfo: { name: "agent-gateway", version: "1" },
      },
    },
    {},
  );
  const result = init.text === null ? null : resultOf(init.text);
  if (!result) throw new RefreshError("bad_answer");
  const negotiated = typeof result.protocolVersion === "string" ? result.protocolVersion : revision;
  const sid = init.headers["mcp-session-id"];
  const headers: Record<string, string> = { "mcp-protocol-version": negotiated };
  if (typeof sid === "string") headers["mcp-session-id"] = sid;
  try {
    await mcpRequest(c, { method: "notifications/initialized" }, headers);
    return await walk(c, headers, tenantId, agentId, catalog, false);
  } finally {
    if (typeof sid === "string") await mcpEnd(c, headers);
  }
}

/** Reads every page; learns each; true when the walk ended on a page without a cursor. */
async function walk(
  c: GatewayDial,
  headers: Record<string, string>,
  tenantId: string,
  agentId: string,
  catalog: ToolCatalog,
  stateless: boolean,
): Promise<boolean> {
  let cursor: string | null = null;
  const seen = new Set<string>();
  for (let i = 1; i <= MAX_PAGES; i++) {
    const params: Record<string, unknown> = cursor ? { cursor } : {};
    // 2026-07-28: every request carries its own envelope in `_meta` (no initialize, no session).
    if (stateless) params._meta = envelope(headers["mcp-protocol-version"] ?? STATELESS_REVISION);
    const extra: Record<string, string> = stateless ? { "mcp-method": "tools/list" } : {};
    const res = await mcpRequest(c, { id: i, method: "tools/list", params }, { ...headers, ...extra });
    const page = res.text === null ? null : toolPageOf(res.text);
    if (!page) throw new RefreshError("bad_answer");
    await catalog.learn({ tenantId, agentId, cursor }, page, { refresh: true });
    if (page.nextCursor === null) return true;
    // A server whose cursor comes back is looping: what was read is kept, the list is not complete.
    if (seen.has(page.nextCursor)) return false;
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
  return false;
}

/** The per-request envelope of a 2026-07-28 request: its revision and the client's capabilities. */
function envelope(revision: string): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": revision,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "agent-gateway", version: "1" },
  };
}

/** What a caller can do about a credential that did not open (nothing was sent upstream). */
function credentialRefusal(reason: CredentialFailure): DomainError {
  switch (reason) {
    case "no_subject_token":
      return new DomainError(
        "unprocessable",
        "the agent's credential exchanges the caller's token: call with an Authorization: Bearer token",
      );
    case "token_unavailable":
      return new DomainError("bad_gateway", "the agent's OAuth credential could not obtain an access token");
    case "host_not_allowed":
      return new DomainError(
        "bad_gateway",
        "the agent's upstream credential is not allowed for its upstream host",
      );
    default:
      return new DomainError("bad_gateway", "the agent's upstream credential could not be used");
  }
}
