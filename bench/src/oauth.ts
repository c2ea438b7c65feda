// The streaming proxy's CPU per call with a cached OAuth credential against a static bearer
// credential, on the same upstream path (target: at most +5 µs). The bench upstream's /token is
// the token endpoint; after the first call the token comes from the proxy's cache.
import type { Deployment } from "./deploy.ts";
import { load } from "./load.ts";
import { cpuMsOf } from "./procs.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";

type Kind = "bearer" | "oauth";

async function agentWith(d: Deployment, kind: Kind, path: string): Promise<string> {
  const post = async (route: string, body: unknown) => {
    const res = await fetch(`${d.controlPlane}${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`POST ${route}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  const credential = await post(
    "/v1/credentials",
    kind === "bearer"
      ? { name: "bench-bearer", kind: "bearer", secret: "bench-static-secret" }
      : {
          name: "bench-oauth",
          kind: "oauth2_client_credentials",
          token_url: `${d.upstream}/token`,
          client_id: "bench",
          secret: "bench-client-secret",
        },
  );
  return post("/v1/agents", {
    name: `bench-${kind}`,
    upstream_url: `${d.upstream}${path}`,
    credential_ref: credential,
  });
}

/** Rounds alternate which kind goes first; each is c=`connections` for `seconds`. */
export async function oauthCpu(
  d: Deployment,
  opts: { path: string; body: string; connections: number; seconds: number; rounds: number },
): Promise<Row> {
  const agents: Record<Kind, string> = {
    bearer: await agentWith(d, "bearer", opts.path),
    oauth: await agentWith(d, "oauth", opts.path),
  };
  const spec = (kind: Kind, seconds: number) => ({
    url: `${d.proxy}/v1/proxy/${agents[kind]}/stream`,
    headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
    body: opts.body,
    connections: opts.connections,
    seconds,
  });
  const pid = d.proxyProc.pid as number;
  const cpu: Record<Kind, number[]> = { bearer: [], oauth: [] };
  for (const kind of ["bearer", "oauth"] as const) await load(spec(kind, 1)); // warm-up, token fetched
  for (let r = 0; r < opts.rounds; r++) {
    for (const kind of r % 2 === 0 ? (["bearer", "oauth"] as const) : (["oauth", "bearer"] as const)) {
      const before = cpuMsOf(pid);
      const res = await load(spec(kind, opts.seconds));
      if (res.errors > 0) throw new Error(`oauth step (${kind}): ${res.errors} failed requests`);
      cpu[kind].push(((cpuMsOf(pid) - before) * 1000) / res.requests);
    }
  }
  const bearer = median(cpu.bearer);
  const oauth = median(cpu.oauth);
  return {
    scenario: "stream oauth",
    metric: `proxy CPU per call c=${opts.connections}, cached OAuth minus static bearer (${bearer.toFixed(1)} vs ${oauth.toFixed(1)} µs)`,
    unit: "µs",
    direct: null,
    bare: null,
    gateway: oauth - bearer,
    target: { text: "<= +5 µs", met: oauth - bearer <= 5 },
  };
}
