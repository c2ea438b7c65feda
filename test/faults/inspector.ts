import { createWriteStream } from "node:fs";
import { WebSocket } from "undici";

/**
 * A process's heap seen from outside, through the V8 inspector it was started with
 * (`--inspect=127.0.0.1:<port>`, see `spawnService`): nothing in the process serves it, so the
 * soak needs no endpoint a production build would have to hide. Each reading opens its own session
 * and closes it (snapshots share one), and no domain is enabled: an open session with `Runtime` enabled would keep
 * every console message, which is the kind of growth the soak looks for.
 */
export type Inspector = {
  /**
   * Right after a full GC (`HeapProfiler.collectGarbage`): the bytes of live JS heap
   * (`Runtime.getHeapUsage`) and the memory V8 accounts outside it (Buffers and other
   * ArrayBuffers, `process.memoryUsage().external`).
   */
  afterGc: () => Promise<{ heap: number; external: number }>;
  /** Writes a heap snapshot (the format Chrome's DevTools and `heap-diff.ts` read) to `path`. */
  snapshot: (path: string) => Promise<void>;
  /** Closes the session the snapshots were taken in, if any. */
  close: () => void;
};

export function inspectorOf(port: number): Inspector {
  let snapshots: ReturnType<typeof connect> | undefined;
  return {
    afterGc: () =>
      session(port, async (send) => {
        await send("HeapProfiler.collectGarbage");
        const usage = (await send("Runtime.getHeapUsage")) as { usedSize: number };
        const outside = (await send("Runtime.evaluate", {
          expression: "process.memoryUsage().external",
          returnByValue: true,
        })) as { result: { value?: number } };
        return { heap: usage.usedSize, external: outside.result.value ?? 0 };
      }),
    snapshot: async (path) => {
      // One session for every snapshot of the process: V8 numbers objects per session, and
      // heap-diff.ts tells the objects kept since the last snapshot by those numbers.
      snapshots ??= connect(port);
      const { send, on } = await snapshots;
      const out = createWriteStream(path);
      on("HeapProfiler.addHeapSnapshotChunk", (p) => out.write((p as { chunk: string }).chunk));
      await send("HeapProfiler.collectGarbage");
      await send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      await new Promise<void>((resolve, reject) =>
        out.end((e?: Error | null) => (e ? reject(e) : resolve())),
      );
    },
    close: () => {
      void snapshots?.then(
        (c) => c.close(),
        () => {},
      );
    },
  };
}

type Send = (method: string, params?: Record<string, unknown>) => Promise<unknown>;
type On = (event: string, handler: (params: unknown) => void) => void;

/** One DevTools-protocol session on the process's single target, closed when `work` ends. */
async function session<T>(port: number, work: (send: Send, on: On) => Promise<T>): Promise<T> {
  const c = await connect(port);
  try {
    return await work(c.send, c.on);
  } finally {
    c.close();
  }
}

/** A DevTools-protocol session on the process's single target (node exposes one). */
async function connect(port: number): Promise<{ send: Send; on: On; close: () => void }> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve(), { once: true });
    ws.addEventListener("error", () => reject(new Error(`inspector ${url}: could not connect`)), {
      once: true,
    });
  });
  let next = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const handlers = new Map<string, (params: unknown) => void>();
  ws.addEventListener("message", (ev) => {
    const msg = JSON.parse(String(ev.data)) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
      method?: string;
      params?: unknown;
    };
    if (msg.id !== undefined) {
      const w = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (msg.error) w?.reject(new Error(`inspector: ${msg.error.message}`));
      else w?.resolve(msg.result);
    } else if (msg.method) handlers.get(msg.method)?.(msg.params);
  });
  ws.addEventListener("close", () => {
    for (const w of waiting.values()) w.reject(new Error("inspector session closed"));
    waiting.clear();
  });
  const send: Send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { send, on: (event, handler) => handlers.set(event, handler), close: () => ws.close() };
}
