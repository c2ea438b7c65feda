import { request } from "node:http";
import { nowMs } from "./clock.ts";

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
