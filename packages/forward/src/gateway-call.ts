import type { Logger } from "@gw/telemetry";
import {
  callUpstreamStreaming,
  type OpenAnswer,
  type Target,
  targetOf,
  type UpstreamAnswerOf,
  type UpstreamFailure,
} from "@gw/upstream";
import { CredentialError, type CredentialFailure, type InjectedHeader, redactSecretText } from "@gw/vault";
import { openAgentCredential } from "./credential.ts";
import type { ForwardDeps } from "./deps.ts";

/**
 * Calls the gateway makes on its own behalf, not relaying a caller's request: tool refresh today
 * (`POST /v1/agents/{id}/tools/refresh`), an agent's card next. They open the agent's credential
 * and dial exactly as step 9 does, so what holds for a relayed call holds for them: the credential
 * opened just in time towards the upstream's host (OAuth kinds through the runtime's OAuth client:
 * its token cache, token requests through the guarded dispatcher), the runtime's one dispatcher
 * (the SSRF guard at dial time, the CA file, the connect time-out), a deadline over every attempt
 * and the body read, the retry rule the request names, and redirects never followed (a 3xx is the
 * answer, for the reader to judge).
 */
export type GatewayCallDeps = Pick<ForwardDeps, "store" | "keyring" | "oauth" | "dispatcher" | "config">;

/** The agent a gateway-originated call goes to. */
export type GatewayCallAgent = {
  readonly tenantId: string;
  readonly agentId: string;
  readonly upstreamUrl: string;
  readonly credentialRef: string | null;
};

/** One request of a gateway-originated call; `headers` are the gateway's own (lower-case names). */
export type GatewayRequest = {
  method: "POST" | "GET" | "DELETE";
  headers: Record<string, string>;
  body: Buffer | null;
  /** Whether a connection failure or a 502/503/504 may be tried again (step 9's rule for the method). */
  retryable: boolean;
};

/** An agent's upstream, its credential open, ready for the requests of one gateway-originated call. */
export type GatewayDial = {
  readonly target: Target;
  /**
   * Sends one request and hands the final answer to `read` (which must report a body it rejects
   * in its result, not by throwing: a throw counts as a network failure). The deadline covers
   * every attempt and the read: the step-9 transactional time-out, or what is left of the call's
   * own `deadlineMs`, whichever ends first.
   */
  request<T>(
    req: GatewayRequest,
    read: (answer: OpenAnswer) => Promise<T>,
  ): Promise<UpstreamAnswerOf<T> | UpstreamFailure>;
  /** An answer's text with the credential's secret masked, as step 9 masks what it keeps. */
  redact(text: string): string;
};

/** The agent's credential could not be opened: nothing was sent. `reason` as the vault names it. */
export class GatewayCredentialError extends Error {
  override name = "GatewayCredentialError";
  constructor(readonly reason: CredentialFailure) {
    super(`credential unavailable: ${reason}`);
  }
}

/**
 * Opens the agent's credential and returns the dial for the call's requests. For
 * `oauth2_token_exchange` the subject token is `subjectToken`: the bearer token of whoever asked
 * the gateway to make the call (an operator refreshing tools calls as if they had called the
 * agent themselves). Throws GatewayCredentialError when the credential does not open; the reason
 * is logged with the vault's coarse detail, never a secret.
 */
export async function dialOnOwnBehalf(opts: {
  agent: GatewayCallAgent;
  deps: GatewayCallDeps;
  /** The bearer token of whoever asked for the call; read only by token exchange. */
  subjectToken?: string | undefined;
  /** Whoever asked for the call (`sub`): whose grant a per-user credential opens (docs/connections.md). */
  sub?: string | null | undefined;
  /** Bound of the whole call, every request of it included. */
  deadlineMs: number;
  log?: Logger | undefined;
}): Promise<GatewayDial> {
  const { agent, deps } = opts;
  const target = targetOf(agent.upstreamUrl);
  const credential = await openOwnCredential(agent, target.host, deps, opts.subjectToken, opts.log, opts.sub);
  const endsAt = Date.now() + opts.deadlineMs;
  return {
    target,
    redact: (text) => redactSecretText(text, credential?.secret ?? ""),
    request: (req, read) =>
      callUpstreamStreaming(
        {
          dispatcher: deps.dispatcher,
          target,
          method: req.method,
          headers: headersOf(agent, req.headers, credential),
          body: req.body,
          retry: {
            retries: deps.config.GW_UPSTREAM_RETRIES,
            baseMs: deps.config.GW_RETRY_BASE_MS,
            retryable: req.retryable,
          },
          timeoutMs: Math.max(1, Math.min(deps.config.GW_TRANSACT_TIMEOUT_MS, endsAt - Date.now())),
        },
        read,
      ),
  };
}

async function openOwnCredential(
  agent: GatewayCallAgent,
  host: string,
  deps: GatewayCallDeps,
  subjectToken: string | undefined,
  log: Logger | undefined,
  sub?: string | null | undefined,
): Promise<InjectedHeader | undefined> {
  try {
    return await openAgentCredential({ ...agent, subjectToken: () => subjectToken, sub }, host, deps);
  } catch (e) {
    if (!(e instanceof CredentialError)) throw e;
    log?.warn(
      { agent_id: agent.agentId, reason: e.reason, detail: e.detail },
      "credential could not be opened for a gateway-originated call",
    );
    throw new GatewayCredentialError(e.reason);
  }
}

/** The gateway's headers, the agent's ids as step 9 sends them, then the credential (which wins). */
function headersOf(
  agent: GatewayCallAgent,
  own: Record<string, string>,
  credential: InjectedHeader | undefined,
): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(own)) {
    if (credential && name.toLowerCase() === credential.header) continue;
    out.push(name, value);
  }
  out.push("x-gateway-agent-id", agent.agentId, "x-gateway-tenant-id", agent.tenantId);
  if (credential) out.push(credential.header, credential.value);
  return out;
}
