import { mintDevToken } from "@gw/auth";
import { ConfigError, loadConfig, processEnv } from "@gw/config";
import { commandLine, fail } from "@gw/core/command-line";
import { OPERATOR_SCOPES } from "./dev.ts";
import { devFilePath, readDevSecret } from "./dev-file.ts";

// `pnpm dev-token --tenant T --sub U [--scope S ...] [--ttl SECONDS]`: mints a dev token that a
// gateway on the dev secret accepts: GW_DEV_JWT_SECRET when set, else the secret `pnpm start` keeps
// in its dev file (dev-file.ts). Every token carries `exp`; gateways refuse tokens without one.
// Not `pnpm token`: pnpm hands that name to npm's own `token` command, never to this script.
const USAGE = "usage: pnpm dev-token --tenant T --sub U [--scope S ...] [--ttl SECONDS]";
const HELP = [
  "Prints a dev token (HS256, for development) that a gateway on the dev secret accepts: the secret",
  "in GW_DEV_JWT_SECRET when set, else the one `pnpm start` keeps in .gw-dev.json (GW_DEV_FILE).",
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
const file = devFilePath(config.GW_DEV_FILE);
const secret = config.GW_DEV_JWT_SECRET ?? readDevSecret(file);
if (!secret) {
  process.stderr.write(
    `no dev secret in ${file}: set GW_DEV_JWT_SECRET, or GW_DEV_FILE to the file the running \`pnpm start\` printed (its default is this one)\n`,
  );
  process.exit(2);
}
const scopes = (values.scope ?? []).flatMap((s) => s.split(/[ ,]/)).filter(Boolean);
console.log(await mintDevToken(secret, { tenant: values.tenant, sub: values.sub, scopes, ttlSeconds: ttl }));
