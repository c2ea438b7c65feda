import { createControlPlaneApp } from "@gw/control-plane";
import type { DirectListener } from "@gw/http";
import { createProxyApp } from "@gw/proxy";
import type { Runtime } from "@gw/runtime";
import { startWorker } from "@gw/worker";
import type { HttpBindings } from "@hono/node-server";

export type Gateway = {
  fetch: (req: Request, env: HttpBindings) => Response | Promise<Response>;
  /** The proxy's hot routes on Node's own objects (see the proxy's direct.ts). */
  direct: DirectListener;
  /** Drains the in-process worker and in-flight stream bookkeeping. */
  stop: () => Promise<void>;
};

/**
 * The all-in-one gateway: the path split an ingress does in the split deployment
 * (/v1/proxy/* → data plane, everything else → control plane) on one port, plus the worker
 * in-process (BullMQ when REDIS_URL is set, else the in-process queue).
 */
export function createGateway(rt: Runtime): Gateway {
  const controlPlane = createControlPlaneApp(rt);
  const proxy = createProxyApp(rt);
  const worker = startWorker(rt);
  return {
    fetch: (req, env) => {
      // The raw URL is cheaper to test than a parsed one; path starts after the authority.
      const url = (env.incoming as { url?: string }).url ?? "";
      return url.startsWith("/v1/proxy/") || url === "/v1/proxy"
        ? proxy.app.fetch(req, env)
        : controlPlane.fetch(req, env);
    },
    direct: proxy.direct,
    stop: async () => {
      await worker.stop();
      await proxy.inflight.drain();
    },
  };
}
