// Builds the operator console (web/) into static files: index.html plus content-hashed JS and CSS.
//
//   node packages/console/build.mjs [outDir]      (default: packages/console/dist/console)
//
// Run by `pnpm start`, by the test global set-up and by infra/docker/bundle.mjs (which writes into
// the service's dist/console, where the bundled control plane looks). Nothing built is committed.
// esbuild does the whole job in well under a second, so every run rebuilds: never a stale console.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = fileURLToPath(new URL(".", import.meta.url));
export const DEFAULT_OUT_DIR = join(here, "dist", "console");

/** Builds the console into `outDir` (emptied first); returns the file names written. */
export async function buildConsole(outDir = DEFAULT_OUT_DIR) {
  rmSync(outDir, { recursive: true, force: true });
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
    metafile: true,
    // No source map: the bundle is served to browsers, the source is in the repository.
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.find((f) => f.endsWith(".js"));
  const css = outputs.find((f) => f.endsWith(".css"));
  if (!js || !css) throw new Error(`console build produced ${outputs.join(", ")}`);
  // Asset URLs are relative to /console/, so the page works behind any path prefix an ingress adds.
  const html = readFileSync(join(here, "web", "index.html"), "utf8")
    .replace("%CSS%", `/console/${css}`)
    .replace("%JS%", `/console/${js}`);
  writeFileSync(join(outDir, "index.html"), html);
  return ["index.html", ...outputs];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = await buildConsole(process.argv[2] ?? DEFAULT_OUT_DIR);
  process.stderr.write(`console built: ${files.join(", ")}\n`);
}
