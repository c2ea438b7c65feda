import { defineProject } from "vitest/config";

export default defineProject({
  test: { name: "@gw/agent-events", testTimeout: 30_000, hookTimeout: 60_000 },
});
