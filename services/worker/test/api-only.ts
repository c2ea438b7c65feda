import { createControlPlaneApp } from "@gw/control-plane";
import { createProxyApp } from "@gw/proxy";
import { serveApp, type TestApp } from "@gw/testkit";

/** The split deployment's API side: control plane and proxy on one port, no worker. */
export function apiOnly(env: Record<string, string>): Promise<TestApp> {
  return serveApp((rt) => {
    const cp = createControlPlaneApp(rt);
    const proxy = createProxyApp(rt);
    return {
      fetch: (req: Request, bindings: { incoming: { url?: string } }) =>
        (bindings.incoming.url ?? "").startsWith("/v1/proxy/")
          ? proxy.app.fetch(req, bindings)
          : cp.fetch(req, bindings),
      direct: proxy.direct,
    };
  }, env);
}
