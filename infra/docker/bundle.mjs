// Bundles one service for its container image: `node infra/docker/bundle.mjs services/<name>`.
//
// The workspace packages (@gw/*) export TypeScript source (docs/adr/0001), so they are inlined into
// dist/main.js; every other package stays external and is loaded from the image's node_modules.
// (`esbuild --packages=external` would leave @gw/* external too, and plain Node cannot load them.)
// Inlining also moves `import.meta.url` of packages/db/src/migrate.ts to dist/main.js, so the
// migrator looks for `../migrations/` next to dist/: the Dockerfile copies them there.
//
// `--local` (the services' `pnpm build`) makes `node services/<name>/dist/main.js` run from a
// checkout (the benchmark does): third-party imports point at the files in node_modules, and the
// migrations are copied to `<service>/migrations` (git- and docker-ignored; the image gets its
// migrations from the Dockerfile).
import { cpSync, readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { buildConsole } from "../../packages/console/build.mjs";

const args = process.argv.slice(2);
const local = args.includes("--local");
const dir = args.find((a) => !a.startsWith("--"));
if (!dir) {
  console.error("usage: node infra/docker/bundle.mjs services/<name> [--local]");
  process.exit(2);
}

/**
 * Bare imports other than the workspace's own stay external (node: builtins included). With
 * `--local` they are pinned to the file esbuild resolves from the importing package: pnpm's strict
 * layout would not let dist/main.js find the dependencies of the inlined @gw/* packages.
 */
const thirdPartyExternal = {
  name: "third-party-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith("@gw/") || args.pluginData === "inner") return undefined;
      if (!local || args.path.startsWith("node:")) return { path: args.path, external: true };
      const r = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: "inner",
      });
      if (r.errors.length > 0) return { errors: r.errors };
      return { path: r.path, external: true };
    });
  },
};

await build({
  entryPoints: [`${dir}/src/main.ts`],
  outfile: `${dir}/dist/main.js`,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  sourcemap: true,
  plugins: [thirdPartyExternal],
  // Node itself ignores "module" (field and condition): pick the file Node would load.
  ...(local ? { mainFields: ["main"], conditions: ["node"] } : {}),
  logLevel: "info",
});

// Services that mount the control plane serve the operator console from dist/console, which is
// where @gw/console's CONSOLE_DIR resolves once inlined into dist/main.js (docs/console.md).
const pkg = JSON.parse(readFileSync(`${dir}/package.json`, "utf8"));
if (pkg.name === "@gw/control-plane" || pkg.dependencies?.["@gw/control-plane"]) {
  const files = await buildConsole(`${dir}/dist/console`);
  console.error(`console: ${files.join(", ")}`);
}

if (local) {
  const migrations = fileURLToPath(new URL("../../packages/db/migrations/", import.meta.url));
  rmSync(`${dir}/migrations`, { recursive: true, force: true });
  cpSync(migrations, `${dir}/migrations`, { recursive: true });
}
