import { defineConfig } from "vitest/config";

// The soak (docs/reliability.md, "The soak"): the split deployment under a steady mix for
// GW_SOAK_MINUTES (20), each process's post-GC heap sampled. Long by design: not in `.ci/run`.
export default defineConfig({
  test: {
    name: "soak",
    include: ["soak.test.ts"],
    hookTimeout: 180_000,
    fileParallelism: false,
    pool: "forks",
    reporters: ["default"],
  },
});
