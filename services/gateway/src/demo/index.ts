import { mintDevToken } from "@gw/auth";
import { NO_TOKEN_COMMAND, OPERATOR_SCOPES } from "../dev.ts";
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

/** The demo's agents, by name; their upstreams are the local servers of this run. */
function demoAgents(upstreams: DemoUpstreams): Array<Record<string, unknown> & { name: string }> {
  return [
    { name: "demo-echo", upstream_url: upstreams.echoUrl, capture_bodies: true },
    { name: "demo-mcp", upstream_url: upstreams.mcpUrl, protocol: "mcp", mcp_transport: "streamable_http" },
    { name: "demo-a2a", upstream_url: upstreams.a2aUrl, protocol: "a2a" },
  ];
}

/**
 * Step 2, once the gateway listens: gives the demo tenant its three agents through the public API,
 * as a user would, and returns the banner with ready-to-paste calls through them. A store kept from
 * an earlier run (GW_DATA_DIR) already has them: they are pointed at this run's servers instead of
 * being made again.
 */
export async function seedDemo(opts: {
  port: number;
  secret: string;
  upstreams: DemoUpstreams;
  /** How to mint another token for this gateway (`devTokenCommand`), if any command can. */
  tokenCommand: string | undefined;
}): Promise<string> {
  const token = await mintDevToken(opts.secret, {
    tenant: DEMO_TENANT,
    sub: DEMO_SUB,
    scopes: [...OPERATOR_SCOPES],
    ttlSeconds: 12 * 3600,
  });
  const self = `http://127.0.0.1:${opts.port}`;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${self}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const kept = new Map<string, string>();
  for (let offset = 0; ; offset += 100) {
    const page = await api("GET", `/v1/agents?limit=100&offset=${offset}`);
    const rows = (page.json.data ?? []) as Array<{ id: string; name: string }>;
    for (const row of rows) if (!kept.has(row.name)) kept.set(row.name, row.id);
    if (rows.length < 100) break;
  }
  const ids: string[] = [];
  for (const agent of demoAgents(opts.upstreams)) {
    const id = kept.get(agent.name);
    const res = id ? await api("PATCH", `/v1/agents/${id}`, agent) : await api("POST", "/v1/agents", agent);
    if (res.status !== (id ? 200 : 201) || typeof res.json.id !== "string") {
      throw new Error(`demo agent ${agent.name} not saved: ${res.json.error ?? res.status}`);
    }
    ids.push(res.json.id);
  }
  const [echo = "", mcp = "", a2a = ""] = ids;
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
  tokenCommand: string | undefined;
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
    ...(o.tokenCommand
      ? [
          `  the token below is the operator's (${OPERATOR_SCOPES.join(", ")}); one with only the scopes you give it:`,
          `    ${o.tokenCommand} --tenant ${DEMO_TENANT} --sub U [--scope S ...]`,
        ]
      : [`  the token below is the operator's (${OPERATOR_SCOPES.join(", ")}); ${NO_TOKEN_COMMAND}`]),
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
