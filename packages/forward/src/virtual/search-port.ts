import type { Json, SearchArgs, VirtualServer } from "@gw/virtual";
import type { ForwardCall } from "../call.ts";

/**
 * One page of a virtual server's merged `tools/list`, asked of its members on the gateway's own
 * behalf: the JSON-RPC response as text, or null when no member answered it.
 */
export type ListPage = (cursor: string | null) => Promise<string | null>;

/**
 * Tool search on a search-mode virtual server (docs/mcp.md, Tool search on virtual servers), as
 * the tool catalog provides it (packages/tools) to step 9, which answers the server's `tools/list`
 * and `search_tools` with it.
 */
export type ToolSearch = {
  /** Of the gateway's own two tools, the names this caller may call (per-caller filtering). */
  ownTools: (call: ForwardCall) => Promise<ReadonlySet<string>>;
  /**
   * The best matches among the server's tools that this caller may call, best first, each
   * `{name, description, inputSchema}` (exposed names; the pinned definition when pinned).
   * `listPage` lists the members on the gateway's behalf when some were never learned.
   */
  search: (call: ForwardCall, server: VirtualServer, args: SearchArgs, listPage: ListPage) => Promise<Json[]>;
};
