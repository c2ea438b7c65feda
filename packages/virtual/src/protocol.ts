import { errorMessage, isRecord, JSON_RPC_ERRORS, type JsonObject, resultMessage } from "@gw/jsonrpc";

/**
 * The MCP revision a virtual server speaks (docs/mcp.md, Virtual MCP servers): stateless, every
 * request carrying its own envelope in `params._meta`.
 */
export const REVISION = "2026-07-28";
export const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
export const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";
export const SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId";

/** The request methods of the revision; every other method is unknown or removed (-32601). */
export const METHODS = new Set([
  "server/discover",
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/read",
  "resources/templates/list",
  "completion/complete",
  "subscriptions/listen",
]);

export const ERRORS = {
  ...JSON_RPC_ERRORS,
  serverError: -32000,
  headerMismatch: -32020,
  unsupportedVersion: -32022,
} as const;

export type JsonRpcId = string | number | null;
export type Json = JsonObject;

/** An answer the virtual server makes itself: an HTTP status and a JSON-RPC message. */
export type OwnAnswer = { status: number; message: Json };

export function result(id: JsonRpcId, value: Json): OwnAnswer {
  return { status: 200, message: resultMessage(id, value) };
}

export function rpcError(
  status: number,
  id: JsonRpcId,
  code: number,
  message: string,
  data?: unknown,
): OwnAnswer {
  return { status, message: errorMessage(id, code, message, data) };
}

/**
 * What the revision answers before it looks at the method (as the official v2 SDK does on a
 * server that serves only this revision): an `initialize` handshake or a request without the
 * per-request envelope is of an older protocol version (-32022, naming the versions supported);
 * an envelope naming another version is -32022 too; an `MCP-Protocol-Version` header that
 * disagrees with the envelope is a header mismatch (-32020). Null: the request is of this revision.
 */
export function versionRefusal(msg: Json, header: string | null): OwnAnswer | null {
  const id = requestId(msg);
  const params = isRecord(msg.params) ? msg.params : undefined;
  const meta = params && isRecord(params._meta) ? params._meta : undefined;
  const claimed = meta?.[PROTOCOL_VERSION_KEY];
  if (typeof claimed !== "string") {
    if (msg.method !== "initialize" && header === REVISION) {
      return rpcError(
        400,
        id,
        ERRORS.invalidParams,
        `Invalid params: the MCP-Protocol-Version header names protocol revision ${REVISION}, but the request is missing the required per-request envelope key(s): ${meta ? PROTOCOL_VERSION_KEY : "_meta"}`,
        { envelope: { missing: [meta ? PROTOCOL_VERSION_KEY : "_meta"] } },
      );
    }
    const requested =
      msg.method === "initialize" && typeof params?.protocolVersion === "string"
        ? params.protocolVersion
        : header;
    return unsupported(id, requested ?? undefined);
  }
  if (header !== null && header !== claimed) {
    return rpcError(
      400,
      id,
      ERRORS.headerMismatch,
      `Bad Request: the request headers and body disagree: the body envelope names protocol version ${claimed} but the MCP-Protocol-Version header names ${header}`,
      { mismatch: { header } },
    );
  }
  if (claimed !== REVISION) return unsupported(id, claimed);
  return null;
}

function unsupported(id: JsonRpcId, requested: string | undefined): OwnAnswer {
  return rpcError(
    400,
    id,
    ERRORS.unsupportedVersion,
    requested === undefined
      ? "Unsupported protocol version: the request did not name a protocol version"
      : `Unsupported protocol version: ${requested}`,
    requested === undefined ? { supported: [REVISION] } : { supported: [REVISION], requested },
  );
}

export function requestId(msg: Json): JsonRpcId {
  const { id } = msg;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
