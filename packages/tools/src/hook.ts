import type { IncomingHttpHeaders } from "node:http";
import { type Answer, type AnswerHook, type BodyUse, isEventStreamAnswer, readHeld } from "@gw/forward";
import { isRecord } from "@gw/jsonrpc";
import { type CompiledPolicy, type ListFacts, listCallerKey, toolListed } from "@gw/policy";
import { TOOL_LIST_MAX_BYTES } from "./answer.ts";
import type { ToolCatalog } from "./catalog.ts";
import { definitionOf, toolDigest } from "./digest.ts";
import { filterToolsJson, type Keep, unfilterableAnswer } from "./filter.ts";
import { createListCache } from "./list-cache.ts";
import type { ToolFacts } from "./repo.ts";
import { filterToolsSse } from "./sse-answer.ts";
import { statusInAnswer } from "./status.ts";

type Call = Parameters<AnswerHook>[0];

/**
 * The tool catalog's answer hook (docs/tools.md), one of MCP's (packages/forward/src/protocols).
 * Only a 2xx answer to an MCP agent's `tools/list` POST is looked at; every other answer costs one comparison. Without a tenant policy the answer
 * is teed and learned after it was delivered, never delayed. With one, the answer is held (at most
 * 8 MiB), its `tools` array filtered for this caller, and learned; an answer that cannot be
 * filtered becomes JSON-RPC error -32603 on the upstream's status, never the unfiltered list.
 */
export function toolsAnswerHook(deps: {
  catalog: ToolCatalog;
  policyOf: (tenantId: string) => Promise<CompiledPolicy | null>;
}): AnswerHook {
  // A caller's next list of the same answer is spliced from the last one (list-cache.ts).
  const lists = createListCache();
  return (call, head, request) => {
    // Asked only for the answers of protocols whose hooks include it (MCP's).
    if (call.rpcMethod !== "tools/list" || call.method !== "POST") return null;
    const id = call.rpcId;
    if (id === null || head.status < 200 || head.status > 299) return null;
    const learn = (json: string | null) => {
      if (json !== null) deps.catalog.learnText({ ...scopeOf(call), cursor: cursorOf(request) }, json);
    };
    return deps.policyOf(call.tenantId).then(
      (policy): BodyUse =>
        policy
          ? { hold: true, maxBytes: TOOL_LIST_MAX_BYTES, reshape: (a, whole) => filtered(a, whole, policy) }
          : {
              hold: false,
              maxBytes: TOOL_LIST_MAX_BYTES,
              // After delivery, and off the relay's own turn: the caller never waits for learning.
              seen: (body) => {
                if (body)
                  setImmediate(() =>
                    learn(readHeld(body, head.headers, id, TOOL_LIST_MAX_BYTES)?.json ?? null),
                  );
              },
            },
      // The policy could not be read: whether to filter is unknown, so the list is refused.
      (): BodyUse => ({ hold: true, maxBytes: TOOL_LIST_MAX_BYTES, reshape: (a) => refused(a, id) }),
    );

    async function filtered(answer: Answer, whole: boolean, policy: CompiledPolicy): Promise<Answer> {
      if (!whole || answer.body === null || id === null) return refused(answer, id);
      let view: ReadonlyMap<string, ToolFacts> = EMPTY;
      if (policy.usesToolStatus) {
        try {
          view = await deps.catalog.view(call.tenantId, call.agentId);
        } catch {
          return refused(answer, id);
        }
      }
      const facts = { tenantId: call.tenantId, agentId: call.agentId, caller: call.caller };
      const callerKey = listCallerKey(policy, facts);
      // Remembered only as it came (no Content-Encoding) and as JSON (not an event stream).
      const plain = !isEventStreamAnswer(answer.headers) && answer.headers["content-encoding"] === undefined;
      const key = `${call.tenantId}\n${call.agentId}\n${callerKey}`;
      const hit = plain ? lists.get(key, policy, view, answer.body, id) : null;
      if (hit) {
        if (!hit.learned) learn(answer.body.toString("latin1"));
        return { status: answer.status, headers: reframed(answer.headers), body: hit.body };
      }
      const held = readHeld(answer.body, answer.headers, id, TOOL_LIST_MAX_BYTES);
      if (held === null) return refused(answer, id);
      const keep = keeper(policy, { ...facts, callerKey }, view);
      const out = held.sse ? filterToolsSse(held.sse, held.json, keep) : filterToolsJson(held.json, keep);
      if (out === null) return refused(answer, id);
      learn(held.json);
      if (plain) lists.put(key, { policy, view, raw: answer.body, text: held.json, out });
      return { status: answer.status, headers: reframed(answer.headers), body: Buffer.from(out) };
    }
  };
}

const EMPTY: ReadonlyMap<string, ToolFacts> = new Map();

function keeper(policy: CompiledPolicy, facts: ListFacts, view: ReadonlyMap<string, ToolFacts>): Keep {
  return (tool) => {
    if (tool === null) return false; // nothing a caller could call by name
    const name = tool.name as string;
    let status = "unpinned";
    if (policy.usesToolStatus) {
      try {
        status = statusInAnswer(view.get(name), toolDigest(definitionOf(tool)));
      } catch {
        status = "unknown";
      }
    }
    return toolListed(policy, facts, name, status);
  };
}

/** The fail-closed answer: a JSON-RPC error on the upstream's status, with the request's id. */
function refused(answer: Answer, id: string | number | null): Answer {
  const headers = reframed(answer.headers);
  headers["content-type"] = "application/json";
  return { status: answer.status, headers, body: Buffer.from(unfilterableAnswer(id)) };
}

/** The upstream's headers for a body the gateway rewrote: decoded, its length set by the relay. */
function reframed(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { "content-length": _l, "content-encoding": _e, ...rest } = headers;
  return rest;
}

function scopeOf(call: Call) {
  return { tenantId: call.tenantId, agentId: call.agentId };
}

/** `params.cursor` of the tools/list request (null: a first page). */
function cursorOf(request: Buffer | null): string | null {
  if (!request) return null;
  try {
    const msg = JSON.parse(request.toString("utf8")) as unknown;
    const params = isRecord(msg) && isRecord(msg.params) ? msg.params : null;
    return params && typeof params.cursor === "string" ? params.cursor : null;
  } catch {
    return null;
  }
}
