import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { TestProjectConfiguration } from "vitest/config";

/**
 * The test passes (docs/testing.md). Every test file runs once, in the main pass, on the stores the
 * environment gives (Postgres and Redis in CI). A file that says `// @stores both: <why>` runs a second
 * time in the embedded pass, on the embedded store and the in-process queue, because what it asserts
 * goes through the store's SQL or the queue's implementation. A file that starts a deployment must say
 * which (`// @stores once: <why>` or `both`), so a new suite decides instead of inheriting either.
 */

const ROOT = join(import.meta.dirname, "..");
const PACKAGE_DIRS = ["packages", "services"];
/** A file that calls one of these (or imports a test helper beside it) starts a deployment or a store. */
const STARTS_DEPLOYMENT =
  /\b(serveApp|createRuntime|openStore|startGateway|spawnGateway)\(|from "\.{1,2}\/[^"]*(helpers|fixture|support|conformance|api-only)\.ts"/;
/** The workspace's source files other than tests: loaded by Node itself (through tsx) in tests. */
const WORKSPACE_SOURCES = /\/(packages|services)\/[^/]+\/src\/(?!.*\.test\.ts$)/;
const MARKER = /^\/\/ @stores (once|both): \S/m;

export type Pass = "main" | "embedded";
type TestFile = { path: string; stores: "once" | "both" };

/** Every test file of one workspace package, with what it declares. Throws on an undeclared suite. */
function testFiles(dir: string): TestFile[] {
  const files: TestFile[] = [];
  for (const entry of walk(dir)) {
    if (!entry.endsWith(".test.ts")) continue;
    const text = readFileSync(join(dir, entry), "utf8");
    const declared = MARKER.exec(text)?.[1] as TestFile["stores"] | undefined;
    const path = relative(ROOT, join(dir, entry));
    if (!declared && STARTS_DEPLOYMENT.test(text)) {
      throw new Error(
        `${path} starts a deployment but does not say which stores it needs: add a line ` +
          "`// @stores both: <why>` (its assertions go through the store or the queue) or " +
          "`// @stores once: <why>` (docs/testing.md)",
      );
    }
    files.push({ path: entry, stores: declared ?? "once" });
  }
  return files;
}

/** Paths under `dir`, relative to it, skipping node_modules (its links lead back into the tree). */
function walk(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    const path = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...walk(dir, path));
    else out.push(path);
  }
  return out;
}

/**
 * One vitest project per workspace package and pass: `@gw/proxy` runs every file of the package,
 * `@gw/proxy (embedded)` the ones that run on both stores.
 */
export function testProjects(passes: Pass[]): TestProjectConfiguration[] {
  const projects: TestProjectConfiguration[] = [];
  for (const group of PACKAGE_DIRS) {
    for (const name of readdirSync(join(ROOT, group)).sort()) {
      const dir = join(ROOT, group, name);
      let files: TestFile[];
      try {
        files = testFiles(dir);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOTDIR") continue;
        throw e;
      }
      if (files.length === 0) continue;
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string };
      // Upper bounds for a hung test, not expectations: a loaded machine (CI shares its two cores
      // between several files, each starting processes) stretches a passing test well past its
      // quiet time, and a passing test never waits for the bound.
      const base = {
        testTimeout: 120_000,
        hookTimeout: 180_000,
        // `expect.poll` waits for a condition; its default bound (1 s) is a duration a loaded
        // machine overruns (a console sign-in through a browser and an identity provider).
        expect: { poll: { timeout: 30_000 } },
        // The workspace's own sources load natively through tsx (registered in every worker, see
        // vitest.config.ts), as in production, instead of module by module through vitest's
        // transform: a file's imports load in about half the time. Test files stay vitest's.
        server: { deps: { external: [WORKSPACE_SOURCES] } },
      };
      if (passes.includes("main")) {
        projects.push({
          root: dir,
          test: { ...base, name: pkg.name, include: files.map((f) => f.path) },
        });
      }
      const both = files.filter((f) => f.stores === "both").map((f) => f.path);
      if (passes.includes("embedded") && both.length > 0) {
        projects.push({
          root: dir,
          test: {
            ...base,
            name: `${pkg.name} (embedded)`,
            include: both,
            // The embedded store and the in-process queue, whatever the machine offers.
            setupFiles: [join(ROOT, "test/embedded-pass.ts")],
          },
        });
      }
    }
  }
  return projects;
}
