import { defineConfig } from "vitest/config";

// The fault suite (docs/reliability.md): its own Postgres, Redis and split deployment, killed and
// restarted on purpose. One file, one fork, tests in order: they share the deployment. The soak
// (soak.test.ts) has its own config: it runs for twenty minutes, outside CI.
export default defineConfig({
  test: {
    name: "faults",
    include: ["faults.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    pool: "forks",
    reporters: ["default"],
  },
});
