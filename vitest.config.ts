import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { type Pass, testProjects } from "./test/passes.ts";
import Sequencer from "./test/sequencer.ts";

// One root run over every workspace package and both passes (docs/testing.md), so `pnpm test` prints
// one summary and both cores stay busy until the last file. The global setup decides where Postgres
// and Redis come from. In CI a JSON report and a per-file timing report are written too; .ci/run
// turns them into closing lines (each failed test, each pass's time, the slowest files).

/** Postgres and Redis come from the environment, or from containers when a Docker engine answers. */
function mainHasServers(): boolean {
  if (process.env.DATABASE_URL && process.env.REDIS_URL) return true;
  try {
    execFileSync("docker", ["info", "--format", "{{.ServerVersion}}"], { timeout: 5_000, stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const only = process.env.GW_TEST_PASS as Pass | undefined;
if (only !== undefined && only !== "main" && only !== "embedded") {
  throw new Error(`GW_TEST_PASS must be main or embedded, not ${only}`);
}
// Without servers the main pass already runs on the embedded store: no second pass.
const passes: Pass[] = only ? [only] : mainHasServers() ? ["main", "embedded"] : ["main"];
// Most suites wait on sockets and child processes, so one worker per core leaves the cores idle.
const workers = Number(process.env.GW_TEST_WORKERS) || availableParallelism() + 1;

export default defineConfig({
  test: {
    projects: testProjects(passes),
    globalSetup: ["./test/global-setup.ts"],
    pool: "forks",
    // tsx in every worker: the workspace's sources load natively (test/passes.ts).
    poolOptions: { forks: { execArgv: ["--import", "tsx"] } },
    maxWorkers: workers,
    minWorkers: 1,
    sequence: { sequencer: Sequencer },
    reporters: process.env.CI
      ? [
          "default",
          ["json", { outputFile: ".ci/vitest.json" }],
          ["./test/timing-reporter.ts", { outputFile: ".ci/vitest-files.json" }],
        ]
      : ["default"],
  },
});
