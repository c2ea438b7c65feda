import { defineConfig } from "vitest/config";

// The fault suite (docs/reliability.md): its own Postgres, Redis and split deployment, killed and
// restarted on purpose. One file, one fork, tests in order: they share the deployment.
export default defineConfig({
  test: {
    name: "faults",
    include: ["*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    pool: "forks",
    reporters: ["default"],
  },
});
