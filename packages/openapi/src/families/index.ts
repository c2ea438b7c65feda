import type * as v from "valibot";
import type { Route } from "../route.ts";
import { agentEventsComponents, agentEventsRoutes } from "./agent-events.ts";
import { agentsComponents, agentsRoutes } from "./agents.ts";
import { analyticsComponents, analyticsRoutes } from "./analytics.ts";
import { approvalsComponents, approvalsRoutes } from "./approvals.ts";
import { auditComponents, auditRoutes } from "./audit.ts";
import { connectionsComponents, connectionsRoutes } from "./connections.ts";
import { credentialsComponents, credentialsRoutes } from "./credentials.ts";
import { discoveryComponents, discoveryRoutes } from "./discovery.ts";
import { identityComponents, identityRoutes } from "./identity.ts";
import { invocationsComponents, invocationsRoutes } from "./invocations.ts";
import { operationsComponents, operationsRoutes } from "./operations.ts";
import { policyComponents, policyRoutes } from "./policy.ts";
import { proxyComponents, proxyRoutes } from "./proxy.ts";
import { receiptsComponents, receiptsRoutes } from "./receipts.ts";
import { settlementComponents, settlementRoutes } from "./settlement.ts";
import { toolsComponents, toolsRoutes } from "./tools.ts";

/**
 * One entry per route family. `surface` names the /v1/capabilities flag (or deployment switch)
 * that mounts it: a deployment documents exactly the families it serves.
 */
export type Family = {
  name: string;
  surface?: "credentials" | "agent_events" | "analytics" | "settlement" | "discovery";
  routes: Route[];
  components: Record<string, v.GenericSchema>;
};

export const FAMILIES: Family[] = [
  { name: "operations", routes: operationsRoutes, components: operationsComponents },
  { name: "identity", routes: identityRoutes, components: identityComponents },
  { name: "agents", routes: agentsRoutes, components: agentsComponents },
  { name: "tools", routes: toolsRoutes, components: toolsComponents },
  {
    name: "credentials",
    surface: "credentials",
    routes: credentialsRoutes,
    components: credentialsComponents,
  },
  {
    name: "connections",
    surface: "credentials",
    routes: connectionsRoutes,
    components: connectionsComponents,
  },
  { name: "invocations", routes: invocationsRoutes, components: invocationsComponents },
  { name: "proxy", routes: proxyRoutes, components: proxyComponents },
  {
    name: "agent-events",
    surface: "agent_events",
    routes: agentEventsRoutes,
    components: agentEventsComponents,
  },
  { name: "analytics", surface: "analytics", routes: analyticsRoutes, components: analyticsComponents },
  { name: "policy", routes: policyRoutes, components: policyComponents },
  { name: "approvals", routes: approvalsRoutes, components: approvalsComponents },
  { name: "audit", routes: auditRoutes, components: auditComponents },
  { name: "receipts", routes: receiptsRoutes, components: receiptsComponents },
  { name: "settlement", surface: "settlement", routes: settlementRoutes, components: settlementComponents },
  { name: "discovery", surface: "discovery", routes: discoveryRoutes, components: discoveryComponents },
];

/**
 * Every named schema of the document, by component name, with its valibot type: @gw/client's
 * typecheck compares each with the generated type of the same name (packages/client/test).
 */
export const COMPONENTS = {
  ...operationsComponents,
  ...identityComponents,
  ...agentsComponents,
  ...toolsComponents,
  ...credentialsComponents,
  ...connectionsComponents,
  ...invocationsComponents,
  ...proxyComponents,
  ...agentEventsComponents,
  ...analyticsComponents,
  ...policyComponents,
  ...approvalsComponents,
  ...auditComponents,
  ...receiptsComponents,
  ...settlementComponents,
  ...discoveryComponents,
};
