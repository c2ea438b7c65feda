import { defineConfig } from "vitest/config";

// One root run over every workspace project, so `pnpm test` prints one summary. In CI a JSON
// report is written too; .ci/run turns it into one closing line.
export default defineConfig({
  test: {
    projects: ["packages/*", "services/*"],
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".ci/vitest.json" }]] : ["default"],
  },
});
