// Closing lines of .ci/run (docs/testing.md): the time of each step and each test pass, the 15
// slowest files, each pass's counts and every failed test by name, so the log's tail says what
// failed where and where the time went. Reads test/timing-reporter.ts's report.
import { existsSync, readFileSync } from "node:fs";

const [timings = ".ci/vitest-files.json", steps = ".ci/steps.txt"] = process.argv.slice(2);
const passOf = (project) => (project.endsWith(" (embedded)") ? "embedded" : "main");
const min = (ms) => `${(ms / 60_000).toFixed(1)} min`;
const rel = (file) => file.replace(`${process.cwd()}/`, "");

if (existsSync(steps)) {
  console.log("steps:");
  for (const line of readFileSync(steps, "utf8").trim().split("\n")) {
    const [name, seconds] = line.split(" ");
    console.log(`  ${name.padEnd(14)} ${min(Number(seconds) * 1000)}`);
  }
}
if (!existsSync(timings)) {
  console.log(`tests: no report (${timings})`);
  process.exit(0);
}
const t = JSON.parse(readFileSync(timings, "utf8"));
console.log(`test run: ${min(t.ended - t.started)} wall for ${t.files.length} files`);
const failures = [];
for (const pass of ["main", "embedded"]) {
  const files = t.files.filter((f) => passOf(f.project) === pass);
  if (files.length === 0) continue;
  // Both passes share the workers, so a pass's wall time is its first start to its last end.
  const start = Math.min(...files.map((f) => f.start));
  const end = Math.max(...files.map((f) => f.start + f.ms));
  const sum = (k) => files.reduce((n, f) => n + f[k], 0);
  console.log(
    `  ${pass} pass: ${files.length} files, ${min(end - start)} wall, ${min(sum("ms"))} of file time; ` +
      `tests: ${sum("passed")} passed, ${sum("failed")} failed, ${sum("skipped")} skipped`,
  );
  for (const f of files) {
    for (const name of f.failures) failures.push(`  failed (${pass}): ${rel(f.file)} > ${name}`);
    if (f.error) failures.push(`  failed (${pass}): ${rel(f.file)} (${f.error})`);
  }
}
console.log("slowest files:");
for (const f of [...t.files].sort((a, b) => b.ms - a.ms).slice(0, 15)) {
  console.log(`  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${passOf(f.project).padEnd(8)} ${rel(f.file)}`);
}
for (const line of failures) console.log(line);
// An error outside any test fails the run though every test passed.
for (const line of t.unhandled ?? []) console.log(`  unhandled: ${line}`);
