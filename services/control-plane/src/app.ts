import { consoleOidcOf } from "@gw/console";
import { type AppEnv, createBaseApp, queryRule, registerHealth, requireAuth } from "@gw/http";
import { healthOf, type Runtime } from "@gw/runtime";
import { Hono } from "hono";
import { publishWrites } from "./changes.ts";
import { registerAgentEvents } from "./routes/agent-events/index.ts";
import { registerAgents } from "./routes/agents/index.ts";
import { registerAnalytics } from "./routes/analytics.ts";
import { registerAnalyticsSummary } from "./routes/analytics-summary.ts";
import { registerApprovals } from "./routes/approvals/index.ts";
import { registerAudit } from "./routes/audit/index.ts";
import { registerCapabilities, surfacesOf } from "./routes/capabilities.ts";
import { registerConnectionCallback, registerConnections } from "./routes/connections/index.ts";
import { registerConsole } from "./routes/console.ts";
import { registerCredentials } from "./routes/credentials/index.ts";
import { registerDiscovery } from "./routes/discovery.ts";
import { registerDocs } from "./routes/docs.ts";
import { registerInvocations } from "./routes/invocations/index.ts";
import { registerMe } from "./routes/me.ts";
import { registerOpenApi } from "./routes/openapi.ts";
import { registerPolicy } from "./routes/policy/index.ts";
import { registerJwks } from "./routes/receipts/jwks.ts";
import { registerSettlement } from "./routes/settlement/index.ts";

export type ControlPlaneDeps = Runtime;

/** The control plane: catalog writes and every read that is not on the proxy path. */
export function createControlPlaneApp(deps: ControlPlaneDeps): Hono<AppEnv> {
  // One base app: request id, access log and span run once per request.
  const app = createBaseApp({ logger: deps.logger });
  registerHealth(app, healthOf(deps));
  const surfaces = surfacesOf(deps);
  // Public: registered before the /v1 family so its auth middleware never runs for it.
  registerJwks(app, deps);
  // Public too: the provider's redirect carries no bearer token; the single-use state binds it.
  if (surfaces.credentials) registerConnectionCallback(app, deps);
  // Outside requireAuth: static files and the sign-in settings carry no data; the page calls /v1
  // with the operator's token.
  registerConsole(app, { oidc: consoleOidcOf(deps.config) });
  const authorizationServers = deps.config.GW_OAUTH_AUTHORIZATION_SERVERS;
  // The API description and discovery are public by nature (docs/api.md).
  registerOpenApi(app, {
    publicUrl: deps.config.publicUrl,
    version: deps.config.GW_VERSION,
    mounted: { ...surfaces, discovery: authorizationServers.length > 0 },
  });
  registerDocs(app);
  if (authorizationServers.length > 0) {
    registerDiscovery(app, { publicUrl: deps.config.publicUrl, authorizationServers });
  }
  const v1 = new Hono<AppEnv>();
  v1.use(requireAuth(deps.verifyToken));
  // Each route takes the query parameters it declares (takesQuery) and no other (docs/interface.md).
  v1.use(queryRule());
  v1.use(publishWrites(deps.changes));
  registerMe(v1);
  registerCapabilities(v1, deps, surfaces);
  registerAgents(v1, deps);
  registerInvocations(v1, deps);
  registerPolicy(v1, deps);
  registerApprovals(v1, deps);
  registerAudit(v1, deps);
  if (surfaces.agent_events) registerAgentEvents(v1, deps);
  if (surfaces.analytics) {
    registerAnalyticsSummary(v1, deps);
    registerAnalytics(v1, deps);
  }
  // Mounted exactly when capabilities says so: the one value decides both.
  if (surfaces.credentials) {
    registerCredentials(v1, deps);
    registerConnections(v1, deps);
  }
  if (surfaces.settlement) registerSettlement(v1, deps);
  app.route("/v1", v1);
  return app;
}
