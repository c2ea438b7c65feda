import { request } from "node:http";
import { nowMs } from "./clock.ts";
import { sampleRss } from "./procs.ts";

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
