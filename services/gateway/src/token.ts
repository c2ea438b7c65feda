import { mintDevToken } from "@gw/auth";
import { ConfigError, loadConfig, processEnv } from "@gw/config";
import { commandLine, fail } from "@gw/core/command-line";
import { dataDirPath, KEPT, KeptSecretDamaged, readKept } from "./data-dir/index.ts";
import { OPERATOR_SCOPES } from "./dev.ts";

// `pnpm dev-token --tenant T --sub U [--scope S ...] [--ttl SECONDS]`: mints a dev token that a
// gateway on the dev secret accepts: GW_DEV_JWT_SECRET when set, else the secret `pnpm start` keeps
// in its data directory (GW_DATA_DIR, data-dir/). Every token carries `exp`; gateways refuse tokens
// without one.
// Not `pnpm token`: pnpm hands that name to npm's own `token` command, never to this script.
const USAGE = "usage: pnpm dev-token --tenant T --sub U [--scope S ...] [--ttl SECONDS]";
const HELP = [
  "Prints a dev token (HS256, for development) that a gateway on the dev secret accepts: the secret",
  "in GW_DEV_JWT_SECRET when set, else the one `pnpm start` keeps in its data directory (GW_DATA_DIR,",
  "default .gateway/data).",
  "",
  "  --tenant T     the tenant the token acts in",
  "  --sub U        the user it names",
  "  --scope S      a scope it holds; repeat it, or separate several with commas. Without --scope it",
  `                 holds none. The operator's: ${OPERATOR_SCOPES.join(", ")}`,
  "  --ttl SECONDS  how long it is valid (default 3600)",
  "  --help         print this and exit",
  "",
  "In a shell, -s keeps pnpm's own lines out of the token:",
  "  export GW_TOKEN=$(pnpm -s dev-token --tenant acme --sub alice --scope invocations:read_body)",
].join("\n");

const { values } = commandLine({
  args: process.argv.slice(2),
  options: {
    tenant: { type: "string" },
    sub: { type: "string" },
    scope: { type: "string", multiple: true },
    ttl: { type: "string" },
  },
  usage: USAGE,
  help: HELP,
});
if (!values.tenant) fail("--tenant is required", USAGE);
if (!values.sub) fail("--sub is required", USAGE);
const ttl = Number(values.ttl ?? "3600");
if (!/^\d+$/.test(values.ttl ?? "3600") || !Number.isSafeInteger(ttl) || ttl < 1) {
  fail("--ttl must be a whole number of seconds, at least 1", USAGE);
}
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(processEnv(), { defaultPort: 8080 });
} catch (e) {
  if (!(e instanceof ConfigError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exit(2);
}
const secret = config.GW_DEV_JWT_SECRET ?? keptSecret(config.GW_DATA_DIR);
const scopes = (values.scope ?? []).flatMap((s) => s.split(/[ ,]/)).filter(Boolean);
console.log(await mintDevToken(secret, { tenant: values.tenant, sub: values.sub, scopes, ttlSeconds: ttl }));

/** The secret `pnpm start` keeps in the data directory GW_DATA_DIR names; exits 2 without one. */
function keptSecret(dataDir: string | undefined): string {
  const dir = dataDirPath({ GW_DATA_DIR: dataDir });
  const refuse = (why: string): never => {
    process.stderr.write(`${why}\n`);
    process.exit(2);
  };
  if (!dir) {
    return refuse(
      "GW_DATA_DIR=memory keeps no dev secret: set GW_DEV_JWT_SECRET to the one the gateway runs with",
    );
  }
  try {
    return (
      readKept(dir, KEPT.devJwtSecret) ??
      refuse(
        `no dev secret in ${dir}: start the gateway first (pnpm start), or set GW_DATA_DIR to the directory it keeps its data in, or GW_DEV_JWT_SECRET`,
      )
    );
  } catch (e) {
    if (!(e instanceof KeptSecretDamaged)) throw e;
    return refuse(`GW_DATA_DIR: ${e.message}`);
  }
}
