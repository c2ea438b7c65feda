import { request } from "node:http";
import { nowMs } from "./clock.ts";
import { sampleRss } from "./procs.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";
import { order, type Target } from "./stream-rows.ts";

const CHUNK = Buffer.alloc(64 * 1024, "y");

export type Transfer = { mibPerS: number; rssGrowthMiB: number | null };

/** POSTs `bytes` generated from one repeated buffer; the upstream discards them. */
export function upload(url: string, headers: Record<string, string>, bytes: number, pid?: number) {
  return transfer(url, headers, bytes, "up", pid);
}

/** POSTs nothing and reads `bytes` the upstream generates. */
export function download(url: string, headers: Record<string, string>, bytes: number, pid?: number) {
  return transfer(url, headers, bytes, "down", pid);
}

async function transfer(
  url: string,
  headers: Record<string, string>,
  bytes: number,
  dir: "up" | "down",
  pid: number | undefined,
): Promise<Transfer> {
  global.gc?.();
  const base = pid ? sampleRss(pid).stop() : 0;
  const sampler = pid ? sampleRss(pid) : null;
  const t0 = nowMs();
  const received = await new Promise<number>((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      headers: { ...headers, "content-length": dir === "up" ? bytes : 0 },
      agent: false,
    });
    req.once("error", reject);
    req.once("response", (res) => {
      let n = 0;
      const body: Buffer[] = [];
      res.on("data", (c: Buffer) => {
        n += c.length;
        if (dir === "up") body.push(c);
      });
      res.once("error", reject);
      res.once("end", () => {
        if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
        if (dir === "up")
          return resolve((JSON.parse(Buffer.concat(body).toString()) as { bytes: number }).bytes);
        resolve(n);
      });
    });
    if (dir === "down") {
      req.end();
      return;
    }
    let left = bytes;
    const pump = () => {
      while (left > 0) {
        const part = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
        left -= part.length;
        if (!req.write(part)) {
          req.once("drain", pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
  const seconds = (nowMs() - t0) / 1000;
  const peak = sampler?.stop() ?? 0;
  if (received !== bytes) throw new Error(`transfer ${dir}: ${received} bytes arrived, ${bytes} sent`);
  return {
    mibPerS: bytes / 2 ** 20 / seconds,
    rssGrowthMiB: pid ? Math.max(0, peak - base) / 2 ** 20 : null,
  };
}

/**
 * The large-body step of `pnpm bench`: `bytes` up and down through each target, rounds in rotating
 * order; the throughput, and the proxy's peak RSS growth (it must stay flat: nothing buffered).
 */
export async function transferRows(o: {
  url: (t: Target, agent: "sink" | "source", path: string) => string;
  auth: Record<string, string>;
  pid: (t: Target) => number | undefined;
  bytes: number;
  rounds: number;
}): Promise<Row[]> {
  const mib = o.bytes / 2 ** 20;
  const rows: Row[] = [];
  for (const dir of ["upload", "download"] as const) {
    const runs: Record<Target, Array<{ mibPerS: number; rssGrowthMiB: number | null }>> = {
      direct: [],
      bare: [],
      gateway: [],
    };
    for (let r = 0; r < o.rounds; r++) {
      for (const t of order(r)) {
        const target =
          dir === "upload" ? o.url(t, "sink", "/sink") : o.url(t, "source", `/source?bytes=${o.bytes}`);
        const fn = dir === "upload" ? upload : download;
        runs[t].push(await fn(target, o.auth, o.bytes, o.pid(t)));
      }
    }
    const growth = Math.max(...runs.gateway.map((x) => x.rssGrowthMiB ?? 0));
    rows.push(
      {
        scenario: `${mib} MiB ${dir}`,
        metric: "throughput",
        unit: "MiB/s",
        direct: median(runs.direct.map((x) => x.mibPerS)),
        bare: median(runs.bare.map((x) => x.mibPerS)),
        gateway: median(runs.gateway.map((x) => x.mibPerS)),
      },
      {
        scenario: `${mib} MiB ${dir}`,
        metric: "peak RSS growth of the proxy",
        unit: "MiB",
        direct: null,
        bare: Math.max(...runs.bare.map((x) => x.rssGrowthMiB ?? 0)),
        gateway: growth,
        target: { text: "< 64 MiB", met: growth < 64 },
      },
    );
  }
  return rows;
}
