import {
  PinInput,
  PinResult,
  RefreshResult,
  ToolDetail,
  ToolList,
  ToolResource,
  TrySearchInput,
  TrySearchResult,
  UnpinResult,
} from "@gw/tools";
import type * as v from "valibot";
import { error, ok } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Tools"];
const notFound = error("No agent with this id in the caller's tenant.");
const notMcp = error("The agent is not an MCP agent: only MCP agents have a tool catalog.");
const pinBody = {
  json: PinInput,
  required: false,
};

export const toolsRoutes: Route[] = [
  {
    method: "post",
    path: "/v1/agents/{id}/tools/search",
    operationId: "searchAgentTools",
    summary: "Try a tool search",
    description:
      "What the search_tools tool of a search-mode virtual server ranks for a query (the same index: names split into words, descriptions, parameters), over the catalog's present tools with their pinned definitions where pinned, best first, with each tool's status. A read: nothing is written. No caller's policy filters it; an agent's own search leaves out what its policy denies it.",
    tags,
    body: { json: TrySearchInput, required: true },
    responses: {
      "200": ok("The best matches, best first.", TrySearchResult),
      "400": error(
        "Not an MCP agent, or a malformed body (query empty or over 512 characters, limit not 1 to 50).",
      ),
      "404": notFound,
    },
  },
  {
    method: "get",
    path: "/v1/agents/{id}/tools",
    operationId: "listAgentTools",
    summary: "An MCP agent's tool catalog",
    description:
      "Every tool the gateway learned from the tools/list answers it relayed or fetched, ordered by name, with its status against its pin: unpinned, pinned, drifted (the server lists another definition than the pinned one) or removed (pinned, absent from the last complete list). refreshed_at: when the last complete list was learned.",
    tags,
    responses: { "200": ok("The catalog.", ToolList), "400": notMcp, "404": notFound },
  },
  {
    method: "get",
    path: "/v1/agents/{id}/tools/{name}",
    operationId: "getAgentTool",
    summary: "One tool, with its current and pinned definitions",
    tags,
    responses: {
      "200": ok("The tool; `pinned` is null when it is not pinned.", ToolDetail),
      "400": notMcp,
      "404": error("No agent with this id in the caller's tenant, or no tool of this name."),
    },
  },
  {
    method: "post",
    path: "/v1/agents/{id}/tools/pin",
    operationId: "pinAgentTools",
    summary: "Pin tools to their current definitions",
    description:
      "Pins the last seen definition of the named tools, or of every catalogued tool when `tools` is absent (or the body is empty). Effective on the next call on every replica.",
    tags,
    body: pinBody,
    responses: {
      "200": ok("The names pinned.", PinResult),
      "400": error(
        "Not an MCP agent, a malformed body, or a name never seen on this agent (tools.N names it).",
      ),
      "404": notFound,
    },
  },
  {
    method: "delete",
    path: "/v1/agents/{id}/tools/pin",
    operationId: "unpinAgentTools",
    summary: "Unpin tools",
    description: "Unpins the named tools, or every pinned tool when `tools` is absent.",
    tags,
    body: pinBody,
    responses: {
      "200": ok("The names unpinned.", UnpinResult),
      "400": error("Not an MCP agent, or a malformed body."),
      "404": notFound,
    },
  },
  {
    method: "post",
    path: "/v1/agents/{id}/tools/refresh",
    operationId: "refreshAgentTools",
    summary: "List the server's tools now",
    description:
      "The gateway calls the agent's MCP server itself, with the agent's credential and the dial-time SSRF guard: a 2026-07-28 server statelessly, an older one with initialize, the list pages, and the end of its session. Every page is learned; `complete` says the whole list was read.",
    tags,
    responses: {
      "200": ok("The catalog after the refresh.", RefreshResult),
      "400": notMcp,
      "404": notFound,
      "422": error("The agent has no upstream_url."),
      "502": error("The server is unreachable, not allowed, or did not answer tools/list as an MCP server."),
      "504": error("The server did not answer in time."),
    },
  },
];

export const toolsComponents = {
  Tool: ToolResource,
  ToolList,
  ToolDetail,
  ToolPinResult: PinResult,
  ToolUnpinResult: UnpinResult,
  ToolRefreshResult: RefreshResult,
} satisfies Record<string, v.GenericSchema>;
