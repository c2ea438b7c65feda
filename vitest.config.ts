import { defineConfig } from "vitest/config";

// One root run over every workspace project, so `pnpm test` prints one summary.
export default defineConfig({
  test: {
    projects: ["packages/*", "services/*"],
  },
});
