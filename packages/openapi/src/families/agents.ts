import { AGENT_PROTOCOLS, AgentResource, CreateAgent, PatchAgent } from "@gw/agents";
import { LIMITS } from "@gw/core";
import { AgentCardResource } from "@gw/forward";
import type * as v from "valibot";
import { bodyTooLarge, enumQuery, error, listOf, noContent, ok, pageParams } from "../common.ts";
import type { Route } from "../route.ts";
import { a2aVersionHeader } from "./proxy.ts";

const tags = ["Agents"];
const notFound = error("No agent with this id in the caller's tenant.");
const badWrite = error(
  'Invalid body: a malformed or unknown field, an upstream_url failing SSRF validation or not https, a credential_ref that does not exist in the tenant, a malformed price, tool_prices on an agent that is not MCP or an entry without a payee (pay_to, or the price of the agent) or whose asset is not the USDC of its network, card_url on an agent that is not A2A or failing the upstream_url rules, mcp_transport other than streamable_http for an MCP agent, or invalid members of a virtual MCP server (1 to 16 MCP agents of the tenant that are not virtual themselves, each once, under unique prefixes matching ^[a-z0-9][a-z0-9-]{0,31}$ or ""; upstream_url and credential_ref null), or tool_discovery "search" on an agent that is not a virtual MCP server; the message names the field and the rule.',
);
const tooLarge = bodyTooLarge(LIMITS.jsonBodyMaxBytes);

export const agentsRoutes: Route[] = [
  {
    method: "post",
    path: "/v1/agents",
    operationId: "createAgent",
    summary: "Create an agent",
    tags,
    body: { json: CreateAgent, required: true },
    responses: {
      "201": {
        ...ok("The agent.", AgentResource),
        headers: { Location: { description: "/v1/agents/{id}", schema: { type: "string" } } },
      },
      "400": badWrite,
      "413": tooLarge,
    },
  },
  {
    method: "get",
    path: "/v1/agents",
    operationId: "listAgents",
    summary: "List agents",
    description: "Deleted agents are excluded. Newest first.",
    tags,
    params: [...pageParams, enumQuery("protocol", AGENT_PROTOCOLS, "Only agents of this protocol.")],
    responses: {
      "200": ok("A page of agents.", listOf(AgentResource)),
      "400": error("Invalid protocol, limit or offset."),
    },
  },
  {
    method: "get",
    path: "/v1/agents/{id}",
    operationId: "getAgent",
    summary: "Get an agent",
    tags,
    responses: { "200": ok("The agent.", AgentResource), "404": notFound },
  },
  {
    method: "patch",
    path: "/v1/agents/{id}",
    operationId: "updateAgent",
    summary: "Update an agent",
    description: "Absent fields are unchanged; null clears a nullable field.",
    tags,
    body: { json: PatchAgent, required: true },
    responses: { "200": ok("The agent.", AgentResource), "400": badWrite, "404": notFound, "413": tooLarge },
  },
  {
    method: "get",
    path: "/v1/agents/{id}/card",
    operationId: "getAgentCard",
    summary: "An A2A agent's card as the gateway serves it",
    description:
      "The same card as GET /v1/proxy/{id}/.well-known/agent-card.json (docs/a2a.md): rewritten to the gateway's JSON-RPC interface and signed when receipts are on.",
    tags,
    params: [a2aVersionHeader],
    responses: {
      "200": ok("The card.", AgentCardResource),
      "400": error("The agent is not an A2A agent."),
      "404": notFound,
      "422": error("The agent has no upstream_url."),
      "502": error("agent card unavailable: the upstream's card is unreachable, not JSON, or over 1 MiB."),
    },
  },
  {
    method: "delete",
    path: "/v1/agents/{id}",
    operationId: "deleteAgent",
    summary: "Delete an agent (soft)",
    description: "The agent becomes inactive; its invocation history stays readable.",
    tags,
    responses: { "204": noContent, "404": notFound },
  },
];

/** Named components: what `components.schemas` holds for this family. */
export const agentsComponents = {
  Agent: AgentResource,
  CreateAgent,
  PatchAgent,
  AgentPrice: AgentResource.entries.price.wrapped,
  AgentRateLimit: AgentResource.entries.rate_limit.wrapped,
  AgentMember: AgentResource.entries.members.wrapped.item,
  AgentToolPrice: AgentResource.entries.tool_prices.wrapped.item,
} satisfies Record<string, v.GenericSchema>;
