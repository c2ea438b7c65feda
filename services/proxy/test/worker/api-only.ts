import { createControlPlaneApp } from "@gw/control-plane";
import { splitByPath } from "@gw/http";
import { createProxyApp } from "@gw/proxy";
import { serveApp, type TestApp } from "@gw/testkit";

/** The split deployment's API side: control plane and proxy on one port, no worker. */
export function apiOnly(env: Record<string, string>): Promise<TestApp> {
  return serveApp((rt) => {
    const proxy = createProxyApp(rt);
    return { fetch: splitByPath(proxy.app.fetch, createControlPlaneApp(rt).fetch), direct: proxy.direct };
  }, env);
}
