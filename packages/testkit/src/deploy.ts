import { loadConfig } from "@gw/config";
import { listen, type Served } from "@gw/http";
import { createRuntime, type Runtime } from "@gw/runtime";
import type { Hono } from "hono";
import { LogCapture, testEnv } from "./env.ts";

export type TestApp = { url: string; rt: Runtime; logs: LogCapture; close: () => Promise<void> };

/**
 * Builds a service app on a real runtime (real store, real Redis when configured) and serves it
 * on a free port. `build` is the service's own createApp.
 */
export async function serveApp(
  // biome-ignore lint/suspicious/noExplicitAny: any app env.
  build: (rt: Runtime) => Hono<any> | Promise<Hono<any>>,
  env: Record<string, string | undefined> = {},
  service = "test",
): Promise<TestApp> {
  const logs = new LogCapture();
  const config = loadConfig(testEnv(env), { defaultPort: 0 });
  const rt = await createRuntime(config, { service, logStream: logs });
  let served: Served;
  try {
    served = await listen(await build(rt), 0, "127.0.0.1");
  } catch (e) {
    await rt.close();
    throw e;
  }
  return {
    url: served.url,
    rt,
    logs,
    close: async () => {
      await served.close();
      await rt.close();
    },
  };
}
