// Two console builds into one directory (two `pnpm start` from one checkout) while servers start
// and serve from it: no server ever names a file it cannot serve, and none finds no console.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBaseApp, listen } from "@gw/http";
import { createLogger } from "@gw/telemetry";
import { LogCapture } from "@gw/testkit";
import { describe, expect, it } from "vitest";
import { buildConsole } from "../../../packages/console/build.mjs";
import { registerConsole } from "../src/routes/console.ts";

/** A fresh server on `dir` (it reads the build on its first request), asked for the page and every file it names. */
async function serveOnce(dir: string): Promise<string[]> {
  const base = createBaseApp({
    logger: createLogger({ service: "test", level: "info", stream: new LogCapture() }),
  });
  registerConsole(base, { dir });
  const served = await listen(base, 0, "127.0.0.1");
  try {
    const failures: string[] = [];
    const page = await fetch(`${served.url}/console`);
    const html = await page.text();
    if (page.status !== 200) return [`/console ${page.status}`];
    for (const [, path] of html.matchAll(/"(\/console\/app-[\w-]+\.(?:js|css))"/g)) {
      const res = await fetch(`${served.url}${path}`);
      await res.arrayBuffer();
      if (res.status !== 200) failures.push(`${path} ${res.status}`);
    }
    return failures;
  } finally {
    await served.close();
  }
}

describe("console build", () => {
  it("two concurrent builds into one directory never leave a server without the files it names", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "gw-console-")), "console");
    await buildConsole(dir);
    let building = true;
    const builds = (async () => {
      try {
        for (let round = 0; round < 3; round++) await Promise.all([buildConsole(dir), buildConsole(dir)]);
      } finally {
        building = false;
      }
    })();
    const failures: string[] = [];
    let served = 0;
    while (building) {
      failures.push(...(await serveOnce(dir)));
      served++;
    }
    await builds;
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(1);
    // Afterwards the directory holds one consistent build a new server serves whole.
    expect(await serveOnce(dir)).toEqual([]);
  });
});
