import type { Runtime } from "@gw/runtime";
import type { AgentLookup } from "./call.ts";
import type { AnswerHooks } from "./protocols/index.ts";
import type { ToolSearch } from "./virtual/search-port.ts";

/**
 * What step 9 needs of the runtime. Kept apart from call.ts: a tool search it carries reads a
 * `ForwardCall` (virtual/search-port.ts), so the two types in one file would make call.ts and
 * the virtual room import each other.
 */
export type ForwardDeps = Pick<
  Runtime,
  "store" | "keyring" | "dispatcher" | "config" | "features" | "oauth"
> & {
  /** A virtual MCP server's member agents, looked up when its call is made. */
  readonly agents: AgentLookup;
  /**
   * The answer-side features (hooks.ts) of each protocol (`answerHooksFor`); none: every answer
   * goes on as the upstream sent it.
   */
  readonly answerHooks?: AnswerHooks;
  /** Tool search of search-mode virtual servers; none: their searches answer an internal error. */
  readonly toolSearch?: ToolSearch;
};
