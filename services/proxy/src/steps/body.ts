import type { IncomingMessage } from "node:http";
import { LIMITS } from "@gw/core";
import { arrivedBody } from "@gw/forward";
import { bodyTooLarge, readNodeBodyCapped } from "@gw/http";
import type { Call } from "../call.ts";

/**
 * Step 4: the request body. The transactional path holds it (32 MiB cap, bytes counted as they
 * arrive: 413). The streaming path holds only a POST whose protocol parses its body (MCP: the
 * envelope must be read before forwarding, under the same cap); every other body streams through
 * untouched. A body that has already arrived whole (most small calls: it came with the head) is
 * taken at once, without a promise; any other is read as it arrives.
 */
export function readBody(call: Call, incoming: IncomingMessage): Call | Promise<Call> {
  const hold = call.mode === "transactional" || (call.speaks.holdsBody && call.method === "POST");
  if (!hold) return call;
  const max = LIMITS.transactMaxBodyBytes;
  const declared = Number(incoming.headers["content-length"] ?? Number.NaN);
  const whole = declared > max ? null : arrivedBody(incoming);
  if (whole === null) return readHeld(call, incoming, max);
  if (whole.length > max) throw bodyTooLarge(max);
  call.body = whole;
  call.forward = whole;
  return call;
}

async function readHeld(call: Call, incoming: IncomingMessage, max: number): Promise<Call> {
  call.body = await readNodeBodyCapped(incoming, max);
  call.forward = call.body;
  return call;
}
