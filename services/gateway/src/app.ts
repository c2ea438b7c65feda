import { createControlPlaneApp } from "@gw/control-plane";
import type { Runtime } from "@gw/runtime";
import { Hono } from "hono";

/**
 * The all-in-one app: the same path split an ingress does in the split deployment
 * (/v1/proxy/* → data plane, everything else → control plane), on one port.
 */
export function createGatewayApp(rt: Runtime): Hono {
  const controlPlane = createControlPlaneApp(rt);
  const app = new Hono();
  app.mount("/", controlPlane.fetch);
  return app;
}
