import { request } from "node:http";
import { nowMs } from "./clock.ts";
import type { Row } from "./report.ts";
import { percentile } from "./stats.ts";
import { order, type Target } from "./stream-rows.ts";

/**
 * Opens `streams` SSE streams at once and returns, for every event, the delay between the
 * upstream stamping it as it flushed and this client parsing it (ms).
 */
export async function sseDelays(
  url: string,
  headers: Record<string, string>,
  streams: number,
): Promise<number[]> {
  const all = await Promise.all(Array.from({ length: streams }, () => one(url, headers)));
  return all.flat();
}

function one(url: string, headers: Record<string, string>): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const delays: number[] = [];
    const req = request(url, {
      method: "POST",
      headers: { ...headers, accept: "text/event-stream", "content-length": 0 },
      agent: false,
    });
    req.once("error", reject);
    req.once("response", (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`sse: status ${res.statusCode}`));
        return;
      }
      let buf = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        const at = nowMs();
        buf += chunk;
        let end = buf.indexOf("\n\n");
        while (end >= 0) {
          const event = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const data = /^data: (.*)$/m.exec(event)?.[1];
          if (data) delays.push(at - Number(data));
          end = buf.indexOf("\n\n");
        }
      });
      res.once("end", () => resolve(delays));
      res.once("error", reject);
    });
    req.end();
  });
}

/**
 * The SSE step of `pnpm bench`: `streams` streams of `events` events, one every `everyMs`, through
 * each target, rounds in rotating order; p50 and p99 of each event's delay from the upstream's
 * flush to the client.
 */
export async function sseRows(o: {
  url: (t: Target, path: string) => string;
  auth: Record<string, string>;
  events: number;
  everyMs: number;
  streams: number;
  rounds: number;
}): Promise<Row[]> {
  const rows: Row[] = [];
  const delays: Record<Target, number[]> = { direct: [], bare: [], gateway: [] };
  for (let r = 0; r < o.rounds; r++) {
    for (const t of order(r))
      delays[t].push(
        ...(await sseDelays(o.url(t, `/sse?n=${o.events}&every=${o.everyMs}`), o.auth, o.streams)),
      );
  }
  for (const q of [50, 99]) {
    const gw = percentile(delays.gateway, q);
    rows.push({
      scenario: "SSE",
      metric: `event delay p${q} (${o.streams} streams, every ${o.everyMs} ms)`,
      unit: "ms",
      direct: percentile(delays.direct, q),
      bare: percentile(delays.bare, q),
      gateway: gw,
      target: q === 99 ? { text: "p99 <= 5 ms", met: gw <= 5 } : undefined,
    });
  }
  return rows;
}
