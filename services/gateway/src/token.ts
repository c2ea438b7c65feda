import { parseArgs } from "node:util";
import { mintDevToken } from "@gw/auth";

// `pnpm token --tenant T --sub U [--scope S ...] [--ttl SECONDS]`: mints a dev token from
// GW_DEV_JWT_SECRET (the secret of a gateway started with it set).
const { values } = parseArgs({
  options: {
    tenant: { type: "string" },
    sub: { type: "string" },
    scope: { type: "string", multiple: true },
    ttl: { type: "string", default: "3600" },
  },
});
const secret = process.env.GW_DEV_JWT_SECRET;
if (!secret || !values.tenant || !values.sub) {
  console.error("usage: GW_DEV_JWT_SECRET=... pnpm token --tenant T --sub U [--scope S] [--ttl SECONDS]");
  process.exit(2);
}
const scopes = (values.scope ?? []).flatMap((s) => s.split(/[ ,]/)).filter(Boolean);
console.log(
  await mintDevToken(secret, {
    tenant: values.tenant,
    sub: values.sub,
    scopes,
    ttlSeconds: Number(values.ttl),
  }),
);
