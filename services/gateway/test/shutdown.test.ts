import { once } from "node:events";
import { newTenant, startUpstream, token } from "@gw/testkit";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { spawnGateway } from "./helpers.ts";

describe("graceful shutdown", () => {
  it("finishes an in-flight stream on SIGTERM, then exits 0", async () => {
    let finishUpstream: (() => void) | undefined;
    const u = await startUpstream(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first;");
      await new Promise<void>((r) => {
        finishUpstream = r;
      });
      res.end("last");
    });
    const { child, url: base, output } = await spawnGateway({});
    try {
      const auth = {
        authorization: `Bearer ${await token(newTenant())}`,
        "content-type": "application/json",
      };
      const created = await request(`${base}/v1/agents`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ name: "slow", upstream_url: u.url }),
      });
      const agent = ((await created.body.json()) as { id: string }).id;

      const res = await request(`${base}/v1/proxy/${agent}/stream`, {
        method: "POST",
        headers: auth,
        body: "x",
      });
      expect(res.statusCode).toBe(200);
      const chunks: string[] = [];
      const reading = (async () => {
        for await (const c of res.body) chunks.push(c.toString());
      })();
      // The stream is open: ask the gateway to stop, then let the upstream finish.
      await new Promise((r) => setTimeout(r, 100));
      child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 200));
      finishUpstream?.();
      await reading;
      expect(chunks.join("")).toBe("first;last");
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      expect(output()).toContain("shutdown complete");
    } finally {
      child.kill("SIGKILL");
      await u.close();
    }
  });
});
