import { mintDevToken } from "@gw/auth";
import { OPERATOR_SCOPES } from "../dev.ts";
import { startA2aServer } from "./a2a.ts";
import { startEchoServer } from "./echo.ts";
import { startMcpServer } from "./mcp.ts";

export type DemoUpstreams = {
  echoUrl: string;
  mcpUrl: string;
  a2aUrl: string;
  close: () => Promise<void>;
};

/** The tenant the demo's agents live in, and the user its token names. */
export const DEMO_TENANT = "demo";
const DEMO_SUB = "demo-user";

/**
 * `pnpm start --demo` (`pnpm demo`), step 1, before the gateway reads its configuration: starts the
 * local echo, MCP and A2A servers and exempts exactly their address from the SSRF guard. 127.0.0.1/32
 * and http:// are allowed for this process only, never by default (docs/security.md).
 */
export async function startDemoUpstreams(env: Record<string, string | undefined>): Promise<DemoUpstreams> {
  if (env.GW_JWKS_URL) {
    throw new Error("--demo mints its own dev token: unset GW_JWKS_URL to run the demo");
  }
  const [echo, mcp, a2a] = await Promise.all([startEchoServer(), startMcpServer(), startA2aServer()]);
  env.GW_ALLOW_HTTP_UPSTREAMS = "true";
  env.GW_SSRF_ALLOW_CIDRS = [env.GW_SSRF_ALLOW_CIDRS, "127.0.0.1/32"].filter(Boolean).join(",");
  const closeOne = (s: { server: { close: (cb: () => void) => void; closeAllConnections: () => void } }) =>
    new Promise<void>((resolve) => {
      s.server.closeAllConnections();
      s.server.close(() => resolve());
    });
  return {
    echoUrl: echo.url,
    mcpUrl: mcp.url,
    a2aUrl: a2a.url,
    close: async () => {
      await Promise.all([closeOne(echo), closeOne(mcp), closeOne(a2a)]);
    },
  };
}

/**
 * Step 2, once the gateway listens: creates the demo tenant's three agents through the public API,
 * as a user would, and returns the banner with ready-to-paste calls through them.
 */
export async function seedDemo(opts: {
  port: number;
  secret: string;
  upstreams: DemoUpstreams;
  /** How to mint another token for this gateway (`devTokenCommand`). */
  tokenCommand: string;
}): Promise<string> {
  const token = await mintDevToken(opts.secret, {
    tenant: DEMO_TENANT,
    sub: DEMO_SUB,
    scopes: [...OPERATOR_SCOPES],
    ttlSeconds: 12 * 3600,
  });
  const self = `http://127.0.0.1:${opts.port}`;
  const create = async (agent: Record<string, unknown>): Promise<string> => {
    const res = await fetch(`${self}/v1/agents`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(agent),
    });
    const json = (await res.json()) as { id?: string; error?: string };
    if (res.status !== 201 || !json.id)
      throw new Error(`demo agent not created: ${json.error ?? res.status}`);
    return json.id;
  };
  const echo = await create({
    name: "demo-echo",
    upstream_url: opts.upstreams.echoUrl,
    capture_bodies: true,
  });
  const mcp = await create({
    name: "demo-mcp",
    upstream_url: opts.upstreams.mcpUrl,
    protocol: "mcp",
    mcp_transport: "streamable_http",
  });
  const a2a = await create({ name: "demo-a2a", upstream_url: opts.upstreams.a2aUrl, protocol: "a2a" });
  return demoBanner({
    base: `http://localhost:${opts.port}`,
    token,
    echo,
    mcp,
    a2a,
    upstreams: opts.upstreams,
    tokenCommand: opts.tokenCommand,
  });
}

function demoBanner(o: {
  base: string;
  token: string;
  echo: string;
  mcp: string;
  a2a: string;
  upstreams: DemoUpstreams;
  tokenCommand: string;
}) {
  const auth = `-H "Authorization: Bearer $GW_TOKEN"`;
  return [
    "",
    `  agent gateway demo on ${o.base}: tenant '${DEMO_TENANT}', no internet needed`,
    `    agent demo-echo ${o.echo} → local echo server ${o.upstreams.echoUrl}`,
    `    agent demo-mcp  ${o.mcp} → local MCP server ${o.upstreams.mcpUrl} (tools echo, add)`,
    `    agent demo-a2a  ${o.a2a} → local A2A agent ${o.upstreams.a2aUrl} (echoes as a task)`,
    "    (this process alone allows http:// and 127.0.0.1/32 upstreams; see the README to allow your own)",
    "",
    `  operator console: ${o.base}/console  (paste the token below)`,
    `  the token below is the operator's (${OPERATOR_SCOPES.join(", ")}); one with only the scopes you give it:`,
    `    ${o.tokenCommand} --tenant ${DEMO_TENANT} --sub U [--scope S ...]`,
    "",
    "  try it:",
    `    export GW_TOKEN=${o.token}`,
    "    # streaming: the upstream's events arrive as it sends them",
    `    curl -sN ${o.base}/v1/proxy/${o.echo}/stream ${auth} -H 'accept: text/event-stream' -d 'hello, streaming'`,
    "    # transactional: 202 with an invocation id at once, then poll for the result",
    `    INV=$(curl -s ${o.base}/v1/proxy/${o.echo} ${auth} -d 'hello, transactional' | sed -E 's/.*"invocation_id":"([^"]+)".*/\\1/')`,
    `    curl -s ${o.base}/v1/proxy/${o.echo}/invocations/$INV ${auth}`,
    "    # MCP: list the tools of the MCP server through the gateway",
    `    curl -s ${o.base}/v1/proxy/${o.mcp}/stream ${auth} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'`,
    "    # A2A: the agent's card as the gateway serves it, then a message to it (its task is recorded)",
    `    curl -s ${o.base}/v1/proxy/${o.a2a}/.well-known/agent-card.json ${auth} -H 'A2A-Version: 1.0'`,
    `    curl -s ${o.base}/v1/proxy/${o.a2a}/stream ${auth} -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello, A2A"}]}}}'`,
    "",
  ].join("\n");
}
