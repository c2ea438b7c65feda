import { boot } from "@gw/runtime";
import { createProxyApp } from "./app.ts";

const { rt, serve } = await boot({ service: "proxy", defaultPort: 8081, longRequests: true });
const proxy = createProxyApp(rt);
await serve(proxy, () => proxy.inflight.drain());
