import { memberSpans, type Span } from "@gw/jsonrpc";
import type { CompiledPolicy } from "@gw/policy";

/**
 * Filtered tool lists, remembered per (agent, policy version, catalog view, what of the caller the
 * policy reads) (docs/tools.md "Per-caller tool lists"). A caller's next list whose upstream answer
 * is the same bytes but for its JSON-RPC `id` is answered from here: two byte comparisons and one
 * splice instead of parsing, walking and re-serialising 200 tools. Only plain JSON answers that are
 * all ASCII are remembered (byte and text offsets agree); anything else takes the full path.
 */
type Entry = {
  policy: CompiledPolicy;
  /** The catalog view the statuses came from (a new view object: a pin or a learned change). */
  view: unknown;
  /** The upstream's answer as it came, and the byte spans of its `id` and of `result.tools`. */
  raw: Buffer;
  id: Span;
  tools: Span;
  /** The filtered `tools` array; null when every tool was kept (the answer goes as it came). */
  kept: Buffer | null;
  learnedAt: number;
};

/** Bytes of upstream answers (and their filtered arrays) remembered per process, at most. */
const BUDGET = 32 * 1024 * 1024;
/** A larger answer is not remembered (one such list would evict many callers' lists). */
const MAX_ENTRY = 2 * 1024 * 1024;

export type ListCache = {
  /** The filtered body for this answer, or null when it must be filtered in full. */
  get: (key: string, policy: CompiledPolicy, view: unknown, raw: Buffer, id: string | number) => Hit | null;
  /** Remembers a filtered answer (`text` is `raw` decoded, `out` what the caller got). */
  put: (
    key: string,
    e: { policy: CompiledPolicy; view: unknown; raw: Buffer; text: string; out: string },
  ) => void;
};
export type Hit = { body: Buffer; learned: boolean };

export function createListCache(now: () => number = Date.now): ListCache {
  const entries = new Map<string, Entry>();
  let bytes = 0;
  const size = (e: Entry) => e.raw.length + (e.kept?.length ?? 0);
  const drop = (key: string, e: Entry) => {
    entries.delete(key);
    bytes -= size(e);
  };
  return {
    get(key, policy, view, raw, id) {
      const e = entries.get(key);
      if (!e || e.policy !== policy || e.view !== view) return null;
      const delta = raw.length - e.raw.length;
      const idEnd = e.id.end + delta;
      if (idEnd <= e.id.start) return null;
      if (!raw.subarray(0, e.id.start).equals(e.raw.subarray(0, e.id.start))) return null;
      if (!raw.subarray(idEnd).equals(e.raw.subarray(e.id.end))) return null;
      // The one place the bytes may differ is the id's value: it must be this request's id.
      try {
        if (JSON.parse(raw.toString("latin1", e.id.start, idEnd)) !== id) return null;
      } catch {
        return null;
      }
      const learned = now() - e.learnedAt < 60_000;
      if (!learned) e.learnedAt = now();
      if (e.kept === null) return { body: raw, learned };
      const shift = e.tools.start > e.id.start ? delta : 0;
      const body = Buffer.concat([
        raw.subarray(0, e.tools.start + shift),
        e.kept,
        raw.subarray(e.tools.end + shift),
      ]);
      return { body, learned };
    },
    put(key, { policy, view, raw, text, out }) {
      if (raw.length !== text.length || raw.length > MAX_ENTRY) return; // not all ASCII, or too big
      const top = memberSpans(text, 0);
      const id = top?.get("id");
      const result = top?.get("result");
      const tools = result ? memberSpans(text, result.start)?.get("tools") : undefined;
      if (!id || !tools) return;
      // What replaced the array in `out`: the same text around it, so its length follows.
      const keptEnd = out.length - (text.length - tools.end);
      const kept = out === text ? null : Buffer.from(out.slice(tools.start, keptEnd), "latin1");
      const old = entries.get(key);
      if (old) drop(key, old);
      // A copy: the answer's buffer is the caller's, this one outlives the call.
      const e: Entry = { policy, view, raw: Buffer.from(raw), id, tools, kept, learnedAt: now() };
      entries.set(key, e);
      bytes += size(e);
      for (const [k, x] of entries) {
        if (bytes <= BUDGET) break;
        drop(k, x);
      }
    },
  };
}
