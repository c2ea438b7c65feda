// The streaming proxy's CPU per call through a per-user credential (oauth2_authorization_code,
// docs/connections.md) against a static bearer credential, on the same upstream path. The caller
// connects once: the bench upstream's /token answers the code exchange (no browser: the callback
// is called with the state the gateway issued, and its handoff code completed with the caller's
// token, as the console does). After the first call the person's access token
// comes from the proxy's cache; what remains per call is the admission check (the credential's
// kind and the cached token) and step 9's opening of the credential.
import type { Deployment } from "./deploy.ts";
import { load } from "./load.ts";
import { cpuMsOf } from "./procs.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";

type Kind = "bearer" | "per_user";

async function post(d: Deployment, route: string, body: unknown): Promise<Record<string, string>> {
  const res = await fetch(`${d.controlPlane}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`POST ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}

async function agentWith(d: Deployment, kind: Kind, path: string): Promise<string> {
  const credential = await post(
    d,
    "/v1/credentials",
    kind === "bearer"
      ? { name: "bench-bearer-2", kind: "bearer", secret: "bench-static-secret" }
      : {
          name: "bench-per-user",
          kind: "oauth2_authorization_code",
          authorization_url: `${d.upstream}/authorize`,
          token_url: `${d.upstream}/token`,
          client_id: "bench",
          secret: "bench-client-secret",
        },
  );
  if (kind === "per_user") {
    // The bench's caller connects: the provider would redirect the browser to this callback.
    const started = await post(d, "/v1/connections", { credential_id: credential.id });
    const state = new URL(started.authorize_url ?? "").searchParams.get("state") ?? "";
    const back = await fetch(
      `${d.controlPlane}/v1/connections/callback?code=bench&state=${encodeURIComponent(state)}`,
      {
        redirect: "manual",
      },
    );
    const location = back.headers.get("location") ?? "";
    const code = /[?&]complete=([^&]+)$/.exec(location)?.[1];
    if (!code) throw new Error(`connect failed: ${back.status} ${location}`);
    // The console completes the connect with the same person's token.
    await post(d, "/v1/connections/complete", { code });
  }
  const agent = await post(d, "/v1/agents", {
    name: `bench-${kind}`,
    upstream_url: `${d.upstream}${path}`,
    credential_ref: credential.id,
  });
  return agent.id as string;
}

/** Rounds alternate which kind goes first; each is c=`connections` for `seconds`. */
export async function perUserCpu(
  d: Deployment,
  opts: { path: string; body: string; connections: number; seconds: number; rounds: number },
): Promise<Row> {
  const agents: Record<Kind, string> = {
    bearer: await agentWith(d, "bearer", opts.path),
    per_user: await agentWith(d, "per_user", opts.path),
  };
  const spec = (kind: Kind, seconds: number) => ({
    url: `${d.proxy}/v1/proxy/${agents[kind]}/stream`,
    headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
    body: opts.body,
    connections: opts.connections,
    seconds,
  });
  const pid = d.proxyProc.pid as number;
  const cpu: Record<Kind, number[]> = { bearer: [], per_user: [] };
  const p50: Record<Kind, number[]> = { bearer: [], per_user: [] };
  for (const kind of ["bearer", "per_user"] as const) await load(spec(kind, 1)); // warm-up, token cached
  for (let r = 0; r < opts.rounds; r++) {
    for (const kind of r % 2 === 0 ? (["bearer", "per_user"] as const) : (["per_user", "bearer"] as const)) {
      const before = cpuMsOf(pid);
      const res = await load(spec(kind, opts.seconds));
      if (res.errors > 0) throw new Error(`connections step (${kind}): ${res.errors} failed requests`);
      cpu[kind].push(((cpuMsOf(pid) - before) * 1000) / res.requests);
      p50[kind].push(res.p50);
    }
  }
  const bearer = median(cpu.bearer);
  const perUser = median(cpu.per_user);
  return {
    scenario: "stream per-user",
    metric: `proxy CPU per call c=${opts.connections}, per-user grant minus static bearer (${bearer.toFixed(1)} vs ${perUser.toFixed(1)} µs; p50 ${median(p50.bearer).toFixed(2)} vs ${median(p50.per_user).toFixed(2)} ms)`,
    unit: "µs",
    direct: null,
    bare: null,
    gateway: perUser - bearer,
    target: { text: "<= +10 µs", met: perUser - bearer <= 10 },
  };
}
