// @stores once: talks to Postgres through its own TCP relay.
import net from "node:net";
import { setImmediate as turn } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../src/client.ts";

// A connection reset while the driver reads the store's array types (the first statement on every
// new connection) must fail or retry the caller's statement, never leave a rejection nobody handles:
// in the gateway's processes that would end the process (docs/reliability.md).

const url = process.env.DATABASE_URL;

describe.skipIf(!url)("a connection reset while the driver reads the array types", () => {
  let relay: net.Server;
  let relayUrl: string;
  let resets = 0;

  beforeAll(async () => {
    const target = new URL(url as string);
    relay = net.createServer((client) => {
      const server = net.connect(Number(target.port || 5432), target.hostname);
      let reset = false;
      client.on("data", (chunk) => {
        // Reset the first connection that asks for the types, once it has asked.
        if (!reset && resets === 0 && chunk.includes("pg_catalog.pg_type")) {
          reset = true;
          resets++;
          client.resetAndDestroy();
          server.destroy();
          return;
        }
        server.write(chunk);
      });
      server.on("data", (chunk) => client.writable && client.write(chunk));
      client.on("error", () => server.destroy());
      server.on("error", () => client.destroy());
      client.on("close", () => server.destroy());
      server.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    const { port } = relay.address() as net.AddressInfo;
    const relayed = new URL(url as string);
    relayed.hostname = "127.0.0.1";
    relayed.port = String(port);
    relayUrl = relayed.toString();
  });
  afterAll(async () => {
    await new Promise((resolve) => relay?.close(resolve));
  });

  it("fails or retries the statement and leaves no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const store = await openStore(relayUrl, { maxConnections: 1 });
    try {
      const outcome = await store.query("select 1 as one", []).then(
        (rows) => rows,
        (e: unknown) => e,
      );
      expect(resets).toBe(1);
      // Either answer is acceptable; what matters is that the caller got one.
      expect(outcome).toBeDefined();
      // Unhandled rejections are reported after the microtask queue drains: let a few turns pass.
      for (let i = 0; i < 5; i++) await turn();
      expect(unhandled).toEqual([]);
      // The pool recovers: the next statement, on a new connection, answers.
      expect(await store.query("select 1 as one", [])).toEqual([{ one: 1 }]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      await store.close();
    }
  });
});
