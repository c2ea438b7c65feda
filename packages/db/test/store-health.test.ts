// @stores once: opens both stores itself in one pass.
import { describe, expect, it } from "vitest";
import { openStore } from "../src/client.ts";

// What a process learns about the store from its own calls (the proxy's 503 instead of 429 while
// the store is down, docs/reliability.md), with the real driver against a port nobody listens on
// and against the real store.

describe("store health", () => {
  it("a refused raw query marks the store down; check says so without another query", async () => {
    const store = await openStore("postgres://postgres@127.0.0.1:1/none");
    try {
      expect(store.health.down()).toBe(false);
      await expect(store.query("select 1", [])).rejects.toThrow();
      expect(store.health.down()).toBe(true);
      expect(await store.health.check()).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("check asks a store it has not heard from, once for every caller meanwhile", async () => {
    const store = await openStore("postgres://postgres@127.0.0.1:1/none");
    try {
      // Nothing has been asked yet: `down` cannot know, `check` finds out.
      expect(store.health.down()).toBe(false);
      expect(await Promise.all([store.health.check(), store.health.check()])).toEqual([true, true]);
      expect(store.health.down()).toBe(true);
    } finally {
      await store.close();
    }
  });

  const stores: Array<[string, string | undefined]> = [["embedded", undefined]];
  if (process.env.DATABASE_URL) stores.push(["postgres", process.env.DATABASE_URL]);
  it.each(stores)("a store that answers is up (%s store)", async (_name, url) => {
    const store = await openStore(url);
    try {
      expect(await store.health.check()).toBe(false);
      await store.query("select 1", []);
      expect(store.health.down()).toBe(false);
      expect(await store.health.check()).toBe(false);
    } finally {
      await store.close();
    }
  });

  it.each(stores)("an answer clears what a failure said (%s store)", async (_name, url) => {
    const store = await openStore(url);
    try {
      store.health.failed(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
      expect(store.health.down()).toBe(true);
      expect(await store.health.check()).toBe(true);
      await store.query("select 1", []);
      expect(store.health.down()).toBe(false);
    } finally {
      await store.close();
    }
  });
});
