import { boot, superviseProcesses } from "@gw/runtime";
import { createProxyApp } from "./app.ts";

// GW_PROXY_PROCESSES > 1: this process only supervises that many proxy processes on one port.
if (superviseProcesses({ service: "proxy", defaultPort: 8081 }) === "serve") {
  const { rt, serve } = await boot({ service: "proxy", defaultPort: 8081, longRequests: true });
  const proxy = createProxyApp(rt);
  await serve(proxy, () => proxy.inflight.drain());
}
