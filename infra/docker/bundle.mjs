// Bundles one service for its container image: `node infra/docker/bundle.mjs services/<name>`.
//
// The workspace packages (@gw/*) export TypeScript source (docs/adr/0001), so they are inlined into
// dist/main.js; every other package stays external and is loaded from the image's node_modules.
// (`esbuild --packages=external` would leave @gw/* external too, and plain Node cannot load them.)
// Inlining also moves `import.meta.url` of packages/db/src/migrate.ts to dist/main.js, so the
// migrator looks for `../migrations/` next to dist/: the Dockerfile copies them there.
import { build } from "esbuild";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node infra/docker/bundle.mjs services/<name>");
  process.exit(2);
}

/** Bare imports other than the workspace's own stay external (node: builtins included). */
const thirdPartyExternal = {
  name: "third-party-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith("@gw/") ? undefined : { path: args.path, external: true },
    );
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
  logLevel: "info",
});
