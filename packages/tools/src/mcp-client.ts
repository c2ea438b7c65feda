import type { IncomingHttpHeaders } from "node:http";
import { collectJsonRpcFromSse, isEventStream, McpSseError } from "@gw/mcp";
import { classifyFailure, readCapped, type Target } from "@gw/upstream";
import type { InjectedHeader } from "@gw/vault";
import { type Dispatcher, request } from "undici";
import { TOOL_LIST_MAX_BYTES } from "./answer.ts";

/** Why a refresh could not read the server's list. */
export type RefreshFailure = "unreachable" | "timeout" | "ssrf_blocked" | "bad_answer";

export class RefreshError extends Error {
  override name = "RefreshError";
  constructor(readonly failure: RefreshFailure) {
    super(failure);
  }
}

/** One JSON-RPC exchange with an MCP server over Streamable HTTP, bounded in time and size. */
export type McpPost = {
  dispatcher: Dispatcher;
  target: Target;
  credential: InjectedHeader | undefined;
  /** Aborts every request of the refresh at its deadline. */
  signal: AbortSignal;
};

/**
 * POSTs one JSON-RPC message and returns the response text (JSON, or the response event of an SSE
 * answer) and the answer's headers; null text for a notification's 202. Redirects are not followed
 * (undici does not follow them); a non-2xx answer or an unreadable body is `bad_answer`.
 */
export async function mcpPost(
  c: McpPost,
  message: { id?: number; method: string; params?: Record<string, unknown> },
  headers: Record<string, string>,
): Promise<{ text: string | null; headers: IncomingHttpHeaders }> {
  const body = JSON.stringify({ jsonrpc: "2.0", ...message });
  const res = await send(c, "POST", body, {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...headers,
  });
  if (res.statusCode < 200 || res.statusCode > 299) {
    await res.body.dump().catch(() => {});
    throw new RefreshError("bad_answer");
  }
  if (message.id === undefined) {
    await res.body.dump().catch(() => {});
    return { text: null, headers: res.headers };
  }
  try {
    const type = res.headers["content-type"];
    if (isEventStream(Array.isArray(type) ? type[0] : type)) {
      const bytes = await collectJsonRpcFromSse(res.body, message.id, { maxBytes: TOOL_LIST_MAX_BYTES });
      return { text: Buffer.from(bytes).toString("utf8"), headers: res.headers };
    }
    const whole = await readCapped(res.body, TOOL_LIST_MAX_BYTES);
    if (!whole) throw new RefreshError("bad_answer");
    return { text: whole.toString("utf8"), headers: res.headers };
  } catch (e) {
    res.body.destroy();
    if (e instanceof RefreshError) throw e;
    // An event stream that ended without the response, or outgrew the bound before it, was read:
    // the server answered, just not a tools/list result (its code would read as a network error).
    if (e instanceof McpSseError) throw new RefreshError("bad_answer");
    throw failureOf(e);
  }
}

/** Ends a server session (older revisions); best effort. */
export async function mcpEnd(c: McpPost, headers: Record<string, string>): Promise<void> {
  try {
    const res = await send(c, "DELETE", undefined, headers);
    await res.body.dump().catch(() => {});
  } catch {
    // The list was read; a server that cannot end its session is no reason to fail the refresh.
  }
}

async function send(
  c: McpPost,
  method: "POST" | "DELETE",
  body: string | undefined,
  headers: Record<string, string>,
) {
  const all: Record<string, string> = { ...headers };
  if (c.credential) all[c.credential.header] = c.credential.value;
  try {
    return await request(`${c.target.origin}${c.target.path}`, {
      method,
      headers: all,
      body: body ?? null,
      dispatcher: c.dispatcher,
      signal: c.signal,
    });
  } catch (e) {
    throw failureOf(e);
  }
}

function failureOf(e: unknown): RefreshError {
  const failure = classifyFailure(e);
  if (failure === "timeout" || failure === "cancelled") return new RefreshError("timeout");
  if (failure === "ssrf_blocked") return new RefreshError("ssrf_blocked");
  return new RefreshError(failure === "unreachable" ? "unreachable" : "bad_answer");
}
