import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";
import { registerCreateCredential } from "./create.ts";
import type { CredentialRouteDeps } from "./ctx.ts";
import { registerDeleteCredential } from "./delete.ts";
import { registerGetCredential } from "./get.ts";
import { registerListCredentials } from "./list.ts";
import { registerUpdateCredential } from "./update.ts";

export function registerCredentials(app: Hono<AppEnv>, deps: CredentialRouteDeps) {
  registerCreateCredential(app, deps);
  registerListCredentials(app, deps);
  registerGetCredential(app, deps);
  registerUpdateCredential(app, deps);
  registerDeleteCredential(app, deps);
}
