import { createControlPlaneApp } from "@gw/control-plane";
import { splitByPath } from "@gw/http";
import { createProxyApp } from "@gw/proxy";
import type { Runtime } from "@gw/runtime";
import { serveApp, type TestApp } from "@gw/testkit";
import { startWorker } from "@gw/worker";

export { type Caller, caller, createAgent, pollDone, recordDone, upstreamPool } from "@gw/testkit";

/**
 * The data plane under test with what it needs around it, on one port and one runtime: the proxy,
 * the control plane that writes its agents, credentials and policies (behind the ingress's path
 * split), and a worker for transactional calls. Real stores, real sockets.
 */
export function deployment(rt: Runtime) {
  const proxy = createProxyApp(rt);
  const worker = startWorker(rt);
  return {
    fetch: splitByPath(proxy.app.fetch, createControlPlaneApp(rt).fetch),
    direct: proxy.direct,
    stop: async () => {
      await worker.stop();
      await proxy.inflight.drain();
    },
  };
}

/** `deployment` served on a free port. */
export function startGateway(env: Record<string, string | undefined> = {}): Promise<TestApp> {
  return serveApp(deployment, env, "gateway");
}
