import type { Settled } from "@gw/payments";
import {
  ERRORS,
  type OwnAnswer,
  REVISION,
  requestId,
  rpcError,
  SEARCH_MODE_TOOLS,
  SERVER_INFO_KEY,
  searchResult,
  shapedFor,
} from "@gw/virtual";
import type { AnswerSink, ForwardCall } from "../call.ts";
import type { ForwardDeps } from "../deps.ts";
import type { Tap } from "../tap.ts";
import type { Route } from "../target.ts";
import { deliver } from "./deliver.ts";
import { membersList } from "./members-list.ts";

type Served = Extract<Route, { kind: "virtual" }>;

/**
 * A search-mode virtual server's `tools/list` and `search_tools` (docs/mcp.md, Tool search on
 * virtual servers), answered by the gateway from the tool catalog: the list holds the gateway's
 * two tools this caller may call (never learned as the members' tools); a search answers the best
 * matches the caller may call, and goes through the answer hooks like any tools/call answer (the
 * answer guard reads it). Members never learned are listed once first, on the gateway's behalf.
 */
export async function searched(
  call: ForwardCall,
  route: Served,
  tap: Tap,
  settled: Settled,
  sink: AnswerSink,
  deps: ForwardDeps,
): Promise<void> {
  const { plan, server } = route;
  if (plan.kind !== "search") return;
  const id = requestId(plan.message);
  const search = deps.toolSearch;
  let answer: OwnAnswer;
  if (!search) answer = rpcError(200, id, ERRORS.internal, "Internal error: tool search is not available");
  else if (plan.search === null) {
    const own = await search.ownTools(call);
    answer = {
      status: 200,
      message: {
        jsonrpc: "2.0",
        id,
        result: {
          tools: SEARCH_MODE_TOOLS.filter((t) => own.has(t.name as string)),
          // Per caller: never shared, and asked again each time (the catalog behind it moves).
          resultType: "complete",
          ttlMs: 0,
          cacheScope: "private",
          _meta: { [SERVER_INFO_KEY]: { name: server.name, version: server.version } },
        },
      },
    };
  } else {
    const listPage = membersList(call, route, deps, sink.caller.log);
    answer = await search.search(call, server, plan.search, listPage).then(
      (tools) => searchResult(id, tools),
      () => rpcError(200, id, ERRORS.internal, "Internal error: the tool catalog could not be read"),
    );
  }
  const message = shapedFor(answer.message, plan.client ?? REVISION);
  return deliver(call, tap, settled, sink, deps, {
    status: answer.status,
    body: Buffer.from(JSON.stringify(message)),
    reached: false,
    hooks: plan.search !== null,
  });
}
