import type { Principal } from "@gw/auth";
import type { Exchange } from "@gw/http";

/** A proxied request: the exchange, its authenticated caller and the agent id of its path. */
export type ProxyExchange = Exchange & { readonly principal: Principal; readonly agentId: string };
