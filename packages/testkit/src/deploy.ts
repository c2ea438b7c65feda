import { loadConfig } from "@gw/config";
import { LogCapture, testEnv } from "@gw/fixtures";
import { type Fetchable, listen, type Served } from "@gw/http";
import { createRuntime, type Runtime } from "@gw/runtime";

export type TestApp = { url: string; rt: Runtime; logs: LogCapture; close: () => Promise<void> };

/**
 * Builds a service app on a real runtime (real store, real Redis when configured) and serves it
 * on a free port. `build` is the service's own createApp.
 */
export async function serveApp(
  build: (
    rt: Runtime,
  ) => (Fetchable & { stop?: () => Promise<void> }) | Promise<Fetchable & { stop?: () => Promise<void> }>,
  env: Record<string, string | undefined> = {},
  service = "test",
): Promise<TestApp> {
  const logs = new LogCapture();
  const config = loadConfig(testEnv(env), { defaultPort: 0 });
  const rt = await createRuntime(config, { service, logStream: logs });
  let served: Served;
  let built: Fetchable & { stop?: () => Promise<void> };
  try {
    built = await build(rt);
    // Port 0 (a free one) unless the test chose one through PORT (to know GW_PUBLIC_URL up front).
    served = await listen(built, config.port, "127.0.0.1");
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
      await built.stop?.();
      await rt.close();
    },
  };
}
