import type { IncomingHttpHeaders } from "node:http";
import { LIMITS } from "@gw/core";
import {
  isEventStream,
  isRecord,
  parseJson,
  SseSplitter,
  sseBlocks,
  sseDataLines,
  sseField,
} from "@gw/jsonrpc";
import type { MemberIds } from "@gw/virtual";
import type { EventStep, EventTransform } from "../protocols/protocol.ts";

/** Relayed requests per member answer or stream: past it a member's requests are dropped (a flood). */
export const RELAYED_REQUESTS_MAX = 64;
const EMPTY = Buffer.alloc(0);
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Who a relayed request's gateway id names: the virtual server, the member and its session. */
export type RelayScope = {
  readonly tenantId: string;
  readonly agentId: string;
  readonly member: string;
  memberSession: string;
};

/**
 * An older member's SSE answer (or GET stream) relayed to an older client (docs/mcp.md,
 * Server-initiated messages): every event passes byte for byte but the member's requests to its
 * client, whose id is replaced by a gateway id (signed: member, member session, the member's own
 * id) that the client's response POST carries back to any replica. Only the event being read is
 * held (bounded); a member that sends more than `RELAYED_REQUESTS_MAX` requests has the rest
 * dropped, so one member cannot flood its client. Notifications and the response pass as they came.
 */
export class RelayedEvents implements EventTransform {
  readonly #split = new SseSplitter(LIMITS.virtualMemberAnswerMaxBytes);
  #relayed = 0;

  constructor(
    private readonly scope: RelayScope,
    private readonly ids: MemberIds,
    private readonly max = RELAYED_REQUESTS_MAX,
  ) {}

  /** This transform for an SSE answer; null for any other (a JSON answer carries no member request). */
  ifStream(headers: IncomingHttpHeaders): this | null {
    const type = headers["content-type"];
    return isEventStream(Array.isArray(type) ? type[0] : type) ? this : null;
  }

  /** The member session was opened anew (its first answered 404): the call's requests live in the new one. */
  renewed(headers: readonly string[]): void {
    for (let i = 0; i + 1 < headers.length; i += 2)
      if ((headers[i] as string).toLowerCase() === "mcp-session-id")
        this.scope.memberSession = headers[i + 1] as string;
  }

  async push(chunk: Buffer): Promise<EventStep> {
    const events = this.#split.push(chunk);
    if (this.#split.over) return { out: Buffer.concat(events), end: true };
    const out: Buffer[] = [];
    for (const event of events) {
      const changed = this.#event(event);
      if (changed !== null) out.push(changed);
    }
    return { out: out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out), end: false };
  }

  end(): Buffer {
    return this.#split.rest();
  }

  refused(): Buffer {
    return EMPTY;
  }

  /** The event as it goes to the client: itself, its request with a gateway id, or null (dropped). */
  #event(raw: Buffer): Buffer | null {
    // Cheap first: only an event that names a method can be a request.
    if (raw.indexOf('"method"') === -1) return raw;
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      return raw;
    }
    const block = sseBlocks(text).find((b) => b.data !== null);
    const msg = block?.data ? parseJson(block.data) : null;
    if (!block || !isRecord(msg) || typeof msg.method !== "string" || !("id" in msg)) return raw;
    const own = msg.id;
    if (typeof own !== "string" && typeof own !== "number") return null;
    if (this.#relayed >= this.max) return null;
    this.#relayed++;
    const id = this.ids.issue({ kind: "request", ...this.scope, id: own });
    const data = JSON.stringify({ ...msg, id });
    const kept = block.lines.filter((l) => sseField(l.text)[0] !== "data").map((l) => l.raw);
    const blank = text.slice(block.end - (text.endsWith("\r\n") ? 2 : 1), block.end);
    return Buffer.from(
      `${text.slice(0, block.start)}${kept.join("")}${sseDataLines(data)}${blank}${text.slice(block.end)}`,
    );
  }
}
