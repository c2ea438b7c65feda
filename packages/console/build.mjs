// Builds the operator console (web/) into static files: index.html plus content-hashed JS and CSS.
//
//   node packages/console/build.mjs [outDir]      (default: packages/console/dist/console)
//
// Run by `pnpm start`, by the test global set-up and by infra/docker/bundle.mjs (which writes into
// the service's dist/console, where the bundled control plane looks). Nothing built is committed.
//
// Several builds and servers may share one directory (two `pnpm start` from one checkout, a test
// run beside a running gateway), so a build never empties it: every file is written under a
// temporary name and renamed into place (a reader sees the old file or the new one, never a gap),
// index.html last, and a hashed asset is removed only when the new index.html does not name it and
// it is older than STALE_MS, long after any server that read the old index.html has loaded it
// (docs/console.md "Build").
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = fileURLToPath(new URL(".", import.meta.url));
export const DEFAULT_OUT_DIR = join(here, "dist", "console");
const STALE_MS = 10 * 60_000;
const ASSET_RE = /^app-[\w-]+\.(js|css)$/;
const TEMP_RE = /\.tmp-[\w-]+$/;

/** Writes `body` to `dir/name` atomically: a temporary file in the same directory, then rename. */
function writeAtomic(dir, name, body) {
  const temp = join(dir, `${name}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  writeFileSync(temp, body);
  renameSync(temp, join(dir, name));
}

/** Removes hashed assets the new index.html does not name, and abandoned temporary files. */
function prune(dir, keep) {
  const now = Date.now();
  for (const name of readdirSync(dir)) {
    if (keep.has(name) || !(ASSET_RE.test(name) || TEMP_RE.test(name))) continue;
    try {
      if (now - statSync(join(dir, name)).mtimeMs > STALE_MS) rmSync(join(dir, name), { force: true });
    } catch {
      // Removed meanwhile by another build: nothing to do.
    }
  }
}

/** Builds the console into `outDir` without ever removing what a server may serve; returns the file names. */
export async function buildConsole(outDir = DEFAULT_OUT_DIR) {
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: [join(here, "web", "main.tsx")],
    outdir: outDir,
    entryNames: "app-[hash]",
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2022", "chrome110", "firefox110", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    // In memory: the files are written below, each atomically.
    write: false,
    // No source map: the bundle is served to browsers, the source is in the repository.
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
  });
  const outputs = result.outputFiles.map((f) => ({ name: basename(f.path), contents: f.contents }));
  const js = outputs.find((f) => f.name.endsWith(".js"));
  const css = outputs.find((f) => f.name.endsWith(".css"));
  if (!js || !css) throw new Error(`console build produced ${outputs.map((f) => f.name).join(", ")}`);
  for (const f of outputs) writeAtomic(outDir, f.name, f.contents);
  // Asset URLs are relative to /console/, so the page works behind any path prefix an ingress adds.
  const html = readFileSync(join(here, "web", "index.html"), "utf8")
    .replace("%CSS%", `/console/${css.name}`)
    .replace("%JS%", `/console/${js.name}`);
  writeAtomic(outDir, "index.html", html);
  prune(outDir, new Set(["index.html", ...outputs.map((f) => f.name)]));
  return ["index.html", ...outputs.map((f) => f.name)];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = await buildConsole(process.argv[2] ?? DEFAULT_OUT_DIR);
  process.stderr.write(`console built: ${files.join(", ")}\n`);
}
