import { defineConfig } from "vitest/config";

// One root run over every workspace project, so `pnpm test` prints one summary. The global setup
// decides where Postgres and Redis come from. In CI a JSON report is written too (one per store
// pass); .ci/run turns them into closing lines that name each failed test.
export default defineConfig({
  test: {
    projects: ["packages/*", "services/*"],
    globalSetup: ["./test/global-setup.ts"],
    reporters: process.env.CI
      ? [
          "default",
          [
            "json",
            { outputFile: `.ci/vitest${process.env.GW_TEST_STORES === "embedded" ? "-embedded" : ""}.json` },
          ],
        ]
      : ["default"],
  },
});
