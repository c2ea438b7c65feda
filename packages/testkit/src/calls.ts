import { client, newTenant, type Res, startUpstream, token, type Upstream } from "@gw/fixtures";
import type { TestApp } from "./deploy.ts";

/** A tenant's caller of a test deployment: `call(method, path, body?, headers?)`, with its tenant and token. */
export type Caller = ((
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Res>) & {
  tenant: string;
  token: string;
};

export async function caller(app: TestApp, scopes: string[] = [], tenant = newTenant()): Promise<Caller> {
  const t = await token(tenant, "user-1", scopes);
  return Object.assign(client(app.url, t), { tenant, token: t });
}

export async function createAgent(call: Caller, body: Record<string, unknown>): Promise<string> {
  const res = await call("POST", "/v1/agents", { name: "agent", ...body });
  if (res.status !== 201) throw new Error(`agent create failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/** Polls the transactional result until the invocation is terminal. */
export async function pollDone(call: Caller, agentId: string, invocationId: string): Promise<Res> {
  const until = Date.now() + 20_000;
  for (;;) {
    const res = await call("GET", `/v1/proxy/${agentId}/invocations/${invocationId}`);
    if (res.status !== 200) return res;
    if (res.json.status === "succeeded" || res.json.status === "failed") return res;
    if (Date.now() > until) throw new Error(`invocation still ${res.json.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Reads an invocation record until it is terminal (streaming outcomes are written after the
 * response), for at most `ms`.
 */
export async function recordDone(call: Caller, invocationId: string, ms = 20_000): Promise<Res> {
  const until = Date.now() + ms;
  for (;;) {
    const res = await call("GET", `/v1/invocations/${invocationId}`);
    if (res.status === 200 && (res.json.status === "succeeded" || res.json.status === "failed")) return res;
    if (Date.now() > until) throw new Error(`invocation not terminal: ${res.status} ${res.text}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Local upstreams for one suite: `up` starts one, `closeAll` stops every one started. */
export function upstreamPool() {
  const started: Upstream[] = [];
  return {
    up: async (...args: Parameters<typeof startUpstream>) => {
      const u = await startUpstream(...args);
      started.push(u);
      return u;
    },
    closeAll: () => Promise.all(started.map((u) => u.close())),
  };
}
