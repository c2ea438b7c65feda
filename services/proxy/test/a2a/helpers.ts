import { randomUUID } from "node:crypto";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { type Caller, freePort, type TestApp } from "@gw/testkit";
import { startGateway } from "../helpers.ts";

/**
 * The gateway on a port known up front, so GW_PUBLIC_URL (where the cards it serves point
 * clients) is where it listens.
 */
export async function startA2aGateway(env: Record<string, string> = {}): Promise<TestApp> {
  const port = await freePort();
  return startGateway({ PORT: String(port), GW_PUBLIC_URL: `http://127.0.0.1:${port}`, ...env });
}

/** A fetch that carries the caller's bearer token, as an A2A client configured for the gateway does. */
export function bearerFetch(token: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
}

/**
 * The official SDK's client, created from the card the gateway serves for the agent (so every
 * call it makes goes to the interface the card names: the gateway's), v0.3 compatibility on.
 */
export async function a2aClient(gw: TestApp, call: Caller, agentId: string) {
  const fetchImpl = bearerFetch(call.token);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }),
    }),
  );
  return factory.createFromUrl(`${gw.url}/v1/proxy/${agentId}/.well-known/agent-card.json`, "");
}

/** A v1.0 user message with one text part (the SDK's own message shape). */
export function userMessage(text: string, extra: { taskId?: string; contextId?: string } = {}) {
  return {
    messageId: randomUUID(),
    role: 1,
    parts: [
      { content: { $case: "text" as const, value: text }, metadata: undefined, filename: "", mediaType: "" },
    ],
    contextId: extra.contextId ?? "",
    taskId: extra.taskId ?? "",
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A raw JSON-RPC request body (what a client of either version sends). */
export function rpc(method: string, params: unknown, id: string | number = 1): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

export const V1 = { "content-type": "application/json", "a2a-version": "1.0" };
export const V03 = { "content-type": "application/json" };
