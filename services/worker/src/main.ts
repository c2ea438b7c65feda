import { ConfigError } from "@gw/config";
import { createBaseApp, registerHealth } from "@gw/http";
import { boot, healthOf } from "@gw/runtime";
import { startWorker } from "./worker.ts";

const { rt, serve } = await boot({
  service: "worker",
  defaultPort: 8082,
  check: (config) => {
    if (!config.REDIS_URL)
      throw new ConfigError("invalid configuration: REDIS_URL is required by the worker");
  },
});
const worker = startWorker(rt);
// The worker serves no API: health and version only.
const health = createBaseApp({ logger: rt.logger, accessLog: false });
registerHealth(health, healthOf(rt));
await serve(health, () => worker.stop());
