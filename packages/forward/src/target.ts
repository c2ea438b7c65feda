import type { Target } from "@gw/upstream";
import type { ForwardCall } from "./call.ts";

/**
 * Where a call goes: the one place its upstream is chosen, before the credential is opened for
 * that host and the call is dialled. Today it is the agent's own upstream; a virtual server
 * choosing one of its members would choose here.
 */
export function chooseTarget(call: ForwardCall): Target {
  return call.target;
}
