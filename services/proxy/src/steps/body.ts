import type { IncomingMessage } from "node:http";
import { LIMITS } from "@gw/core";
import { readNodeBodyCapped } from "@gw/http";
import type { Call } from "../call.ts";

/**
 * Step 4: the request body. The transactional path holds it (32 MiB cap, bytes counted as they
 * arrive: 413). The streaming path holds only a POST whose protocol parses its body (MCP: the
 * envelope must be read before forwarding, under the same cap); every other body streams through
 * untouched.
 */
export async function readBody(call: Call, incoming: IncomingMessage): Promise<Call> {
  const hold = call.mode === "transactional" || (call.speaks.holdsBody && call.method === "POST");
  if (!hold) return call;
  call.body = await readNodeBodyCapped(incoming, LIMITS.transactMaxBodyBytes);
  call.forward = call.body;
  return call;
}
