import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Reporter } from "vitest/reporters";

type Task = {
  type: string;
  name: string;
  mode?: string;
  tasks?: Task[];
  result?: { state?: string; errors?: Array<{ message?: string }> };
};
type Counts = { passed: number; failed: number; skipped: number; failures: string[] };

/**
 * Writes what .ci/summary.mjs prints (docs/testing.md): for each test file of each project its
 * start, its time (imports, setup and tests), its counts and the names of its failed tests, and
 * the run's wall time. A file that runs in both passes appears once per pass.
 */
export default class TimingReporter implements Reporter {
  private started = Date.now();
  constructor(private readonly opts: { outputFile: string }) {}

  onInit() {
    this.started = Date.now();
  }

  onFinished(
    files: Parameters<NonNullable<Reporter["onFinished"]>>[0] = [],
    errors: Parameters<NonNullable<Reporter["onFinished"]>>[1] = [],
  ) {
    const out = files.map((f) => {
      const before = (f.collectDuration ?? 0) + (f.setupDuration ?? 0);
      const counts: Counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
      for (const t of f.tasks as Task[]) count(t, [], counts);
      const state = f.result?.state ?? "unknown";
      // A file can fail with every test passed (a hook that timed out, an error outside a test).
      const error = state === "fail" && counts.failed === 0 ? f.result?.errors?.[0]?.message : undefined;
      return {
        project: f.projectName ?? "",
        file: f.filepath,
        state,
        start: (f.result?.startTime ?? this.started) - before,
        ms: Math.round(before + (f.result?.duration ?? 0)),
        ...counts,
        ...(error ? { error: error.split("\n")[0] } : {}),
      };
    });
    mkdirSync(dirname(this.opts.outputFile), { recursive: true });
    writeFileSync(
      this.opts.outputFile,
      JSON.stringify({ started: this.started, ended: Date.now(), files: out, unhandled: unhandled(errors) }),
    );
  }
}

function count(task: Task, path: string[], c: Counts) {
  const names = [...path, task.name];
  if (task.type !== "test") {
    for (const t of task.tasks ?? []) count(t, names, c);
    return;
  }
  const state = task.result?.state;
  if (state === "pass") c.passed++;
  else if (state === "fail") {
    c.failed++;
    c.failures.push(names.join(" > "));
  } else c.skipped++;
}

/** Errors outside any test (an unhandled rejection): they fail the run though every test passed. */
function unhandled(errors: readonly unknown[]): string[] {
  return errors.map((e) => {
    const err = e as { name?: string; message?: string; stack?: string; VITEST_TEST_PATH?: string };
    const where = err.VITEST_TEST_PATH ? ` (while ${err.VITEST_TEST_PATH} ran)` : "";
    return `${err.name ?? "Error"}: ${String(err.message ?? e).split("\n")[0]}${where}`;
  });
}
