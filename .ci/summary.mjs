// Prints "<label> tests: N passed, N failed, N skipped" from each vitest JSON report given,
// followed by the name of every failed test, so the log's tail says what failed in which pass.
import { existsSync, readFileSync } from "node:fs";

for (const arg of process.argv.slice(2)) {
  const [label, file] = arg.includes("=") ? arg.split("=", 2) : ["", arg];
  if (!existsSync(file)) {
    console.log(`${label} tests: no report (${file})`.trim());
    continue;
  }
  const r = JSON.parse(readFileSync(file, "utf8"));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  // A file can fail with every test passed (a hook that timed out, an error outside a test).
  const suites = r.numFailedTestSuites ?? 0;
  console.log(
    `${label} tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped; ${suites} failed files`.trim(),
  );
  for (const suite of r.testResults ?? []) {
    const tests = suite.assertionResults ?? [];
    for (const t of tests) {
      if (t.status === "failed") console.log(`  failed: ${suite.name} > ${t.fullName}`);
    }
    if (suite.status === "failed" && !tests.some((t) => t.status === "failed")) {
      console.log(`  failed: ${suite.name} (${String(suite.message ?? "").split("\n")[0]})`);
    }
  }
}
