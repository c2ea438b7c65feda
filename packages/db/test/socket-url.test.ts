// @stores once: Postgres only (its Unix socket); the URL forms are pure.
import { existsSync } from "node:fs";
import { isStoreUnavailable } from "@gw/core";
import { describe, expect, it } from "vitest";
import { openStore } from "../src/client.ts";
import { socketUrl } from "../src/socket-url.ts";

describe("a store URL naming a Unix socket", () => {
  it("reads libpq's two forms and leaves every other URL alone", () => {
    expect(socketUrl("postgres://u@localhost/db?host=/var/run/postgresql")).toEqual({
      url: "postgres://u@localhost/db",
      path: "/var/run/postgresql/.s.PGSQL.5432",
    });
    expect(socketUrl("postgresql://u@%2Ftmp%2Fpg%2F:6000/db?sslmode=disable")).toEqual({
      url: "postgresql://u@localhost:6000/db?sslmode=disable",
      path: "/tmp/pg/.s.PGSQL.6000",
    });
    // Another query parameter stays; a host parameter that is a name is not a socket.
    expect(socketUrl("postgres://u@db.internal:5432/x?host=replica&application_name=a")).toEqual({
      url: "postgres://u@db.internal:5432/x?host=replica&application_name=a",
      path: undefined,
    });
    expect(socketUrl("postgres://u:p%40ss@127.0.0.1:5432/db")).toEqual({
      url: "postgres://u:p%40ss@127.0.0.1:5432/db",
      path: undefined,
    });
  });

  it("a socket that is not there: a query fails as the store being unavailable", async () => {
    const store = await openStore("postgres://postgres@localhost/none?host=/nonexistent-gw-socket-dir");
    try {
      const e = await store.query("select 1", []).then(
        () => new Error("expected a failure"),
        (err: unknown) => err,
      );
      expect(isStoreUnavailable(e)).toBe(true);
    } finally {
      await store.close();
    }
  });
});

/** The directory holding the socket of DATABASE_URL's server when it runs on this machine, if any. */
function localSocketDir(): string | undefined {
  const url = process.env.DATABASE_URL;
  if (!url) return undefined;
  const { hostname, port } = new URL(url);
  if (hostname !== "127.0.0.1" && hostname !== "localhost") return undefined;
  return ["/var/run/postgresql", "/tmp"].find((d) => existsSync(`${d}/.s.PGSQL.${port || 5432}`));
}

const dir = localSocketDir();

describe.runIf(dir !== undefined)("the store over the local server's Unix socket", () => {
  it("queries through the socket, not TCP", async () => {
    const url = new URL(process.env.DATABASE_URL as string);
    url.searchParams.set("host", dir as string);
    const store = await openStore(url.toString());
    try {
      // inet_server_addr() is null on a Unix-socket connection, the server's address over TCP.
      const [row] = await store.query("select inet_server_addr() as addr, $1::int + 1 as two", [1]);
      expect(row).toEqual({ addr: null, two: 2 });
      const [tcp] = await (async () => {
        const s = await openStore(process.env.DATABASE_URL);
        try {
          return await s.query("select inet_server_addr()::text as addr", []);
        } finally {
          await s.close();
        }
      })();
      expect(tcp?.addr).not.toBeNull();
    } finally {
      await store.close();
    }
  });
});
