import { parseArgs } from "node:util";
import { mintDevToken } from "@gw/auth";
import { devFilePath, readDevSecret } from "./dev-file.ts";

// `pnpm token --tenant T --sub U [--scope S ...] [--ttl SECONDS]`: mints a dev token that a gateway
// on the dev secret accepts: GW_DEV_JWT_SECRET when set, else the secret `pnpm start` keeps in its
// dev file (dev-file.ts). Every token carries `exp`; gateways refuse tokens without one.
const USAGE = "usage: pnpm token --tenant T --sub U [--scope S] [--ttl SECONDS]";
const { values } = parseArgs({
  options: {
    tenant: { type: "string" },
    sub: { type: "string" },
    scope: { type: "string", multiple: true },
    ttl: { type: "string", default: "3600" },
  },
});
const file = devFilePath(process.env);
const secret = process.env.GW_DEV_JWT_SECRET || readDevSecret(file);
const ttl = Number(values.ttl);
if (!values.tenant || !values.sub || !Number.isSafeInteger(ttl) || ttl < 1) {
  console.error(`${USAGE}\n  (--ttl: a whole number of seconds, at least 1)`);
  process.exit(2);
}
if (!secret) {
  console.error(
    `no dev secret: set GW_DEV_JWT_SECRET, or run \`pnpm start\` once (it keeps its secret in ${file})`,
  );
  process.exit(2);
}
const scopes = (values.scope ?? []).flatMap((s) => s.split(/[ ,]/)).filter(Boolean);
console.log(await mintDevToken(secret, { tenant: values.tenant, sub: values.sub, scopes, ttlSeconds: ttl }));
