import { isRecord, LineParser, SseParser, sseComment, sseEvent } from "@gw/jsonrpc";
import { type Json, SUBSCRIPTION_ID_KEY } from "./protocol.ts";

const ACK = "notifications/subscriptions/acknowledged";
/** How often the merged stream says it is alive when no member spoke (as the SDK's servers do). */
const KEEPALIVE_MS = 15_000;
/** One notification of a member's stream is at most this large; a member that sends more is closed. */
export const LISTEN_MESSAGE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * A member's open `subscriptions/listen` stream: server-sent events, or JSON-RPC messages one per
 * line (a streamed `application/json` body, as some servers send it).
 */
export type MemberStream = {
  readonly body: AsyncIterable<Buffer>;
  readonly format: "sse" | "lines";
  readonly close: () => void;
};

/**
 * The members' `subscriptions/listen` streams merged into one SSE stream (docs/mcp.md): one
 * acknowledgement, sent once every member acknowledged (or ended), naming what any member agreed
 * to, then every member's notifications as they arrive (their `id:` fields dropped, since ids of
 * different streams would collide). It ends when every member stream ended; `close` ends it early
 * (the caller went away) and closes the members' streams.
 */
export function mergeListen(
  streams: readonly MemberStream[],
  request: Json,
): { events: AsyncIterable<string>; close: () => void } {
  const queue: string[] = [];
  let wake: (() => void) | null = null;
  let open = streams.length;
  let closed = false;
  const acked = new Set<number>();
  const agreed: Json = {};
  // The members name the subscription by the request id; the first acknowledgement's spelling is kept.
  let subscriptionId: unknown = request.id;
  let named = false;
  const held: string[] = [];
  const push = (s: string) => {
    queue.push(s);
    wake?.();
  };
  const ackIfReady = () => {
    // Once: a member stream that ends after the acknowledgement went out must not send another.
    if (acked.has(-1) || acked.size < streams.length) return;
    acked.add(-1);
    const params: Json = { notifications: agreed, _meta: { [SUBSCRIPTION_ID_KEY]: subscriptionId } };
    push(frame({ jsonrpc: "2.0", method: ACK, params }));
    for (const e of held.splice(0)) push(e);
  };
  const read = async (i: number, stream: MemberStream) => {
    const parser =
      stream.format === "sse"
        ? new SseParser({ maxEventBytes: LISTEN_MESSAGE_MAX_BYTES })
        : new LineParser({ maxLineBytes: LISTEN_MESSAGE_MAX_BYTES });
    const handle = (data: string) => {
      let msg: unknown;
      try {
        msg = JSON.parse(data);
      } catch {
        return; // not JSON-RPC: dropped, the other members go on
      }
      if (!isRecord(msg)) return;
      if (msg.method === ACK && !acked.has(i)) {
        const params = isRecord(msg.params) ? msg.params : {};
        if (isRecord(params.notifications)) Object.assign(agreed, union(agreed, params.notifications));
        const meta = isRecord(params._meta) ? params._meta : {};
        if (!named && meta[SUBSCRIPTION_ID_KEY] !== undefined) {
          subscriptionId = meta[SUBSCRIPTION_ID_KEY];
          named = true;
        }
        acked.add(i);
        return ackIfReady();
      }
      // Multi-line data stays one event: each of its lines is a data line of its own.
      const out = sseEvent({ event: "message", data });
      if (acked.has(-1)) push(out);
      else held.push(out);
    };
    try {
      for await (const chunk of stream.body) for (const e of parser.push(chunk)) handle(e.data);
    } catch {
      // a member stream that broke (or sent a message over the cap) ends; the others go on
      stream.close();
    } finally {
      acked.add(i);
      ackIfReady();
      open -= 1;
      if (open === 0) wake?.();
    }
  };
  streams.forEach((s, i) => {
    void read(i, s);
  });
  const close = () => {
    closed = true;
    for (const s of streams) s.close();
    wake?.();
  };
  async function* events(): AsyncGenerator<string> {
    const timer = setInterval(() => push(sseComment("keepalive")), KEEPALIVE_MS);
    try {
      for (;;) {
        const next = queue.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (closed || open === 0) return;
        await new Promise<void>((r) => {
          wake = r;
        });
        wake = null;
      }
    } finally {
      clearInterval(timer);
    }
  }
  return { events: events(), close };
}

function frame(message: Json): string {
  return sseEvent({ event: "message", data: JSON.stringify(message) });
}

/** The notification kinds any member agreed to (a flag set by one stays set). */
function union(a: Json, b: Json): Json {
  const out: Json = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (out[k] === true) continue;
    out[k] = isRecord(v) && isRecord(out[k]) ? { ...(out[k] as Json), ...v } : v;
  }
  return out;
}
