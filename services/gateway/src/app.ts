import { createControlPlaneApp } from "@gw/control-plane";
import { type DirectListener, type Fetchable, splitByPath } from "@gw/http";
import { createProxyApp } from "@gw/proxy";
import type { Runtime } from "@gw/runtime";
import { startWorker } from "@gw/worker";

export type Gateway = {
  fetch: Fetchable["fetch"];
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
    fetch: splitByPath(proxy.app.fetch, controlPlane.fetch),
    direct: proxy.direct,
    stop: async () => {
      await worker.stop();
      await proxy.inflight.drain();
    },
  };
}
