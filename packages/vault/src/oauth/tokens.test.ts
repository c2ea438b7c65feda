import { describe, expect, it } from "vitest";
import { TokenCache } from "./tokens.ts";

const cred = { tenantId: "t1", id: "cred_a" };

describe("TokenCache", () => {
  it("fetches once for concurrent misses and reuses the token until 30 s before it expires", async () => {
    let now = 1_000_000;
    const cache = new TokenCache(() => now);
    let fetches = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const fetch = async () => {
      fetches++;
      await gate;
      return { token: `tok-${fetches}`, expiresIn: 100 };
    };
    const all = Promise.all([1, 2, 3].map(() => cache.get(cred, "1", fetch)));
    release();
    expect(await all).toEqual(["tok-1", "tok-1", "tok-1"]);
    now += 69_000; // 31 s left: still used
    expect(await cache.get(cred, "1", fetch)).toBe("tok-1");
    now += 1_000; // 30 s left: refetched
    expect(await cache.get(cred, "1", fetch)).toBe("tok-2");
    expect(fetches).toBe(2);
  });

  it("does not keep a token that lives 30 s or less, nor a failure", async () => {
    const cache = new TokenCache();
    let n = 0;
    const short = async () => ({ token: `s-${++n}`, expiresIn: 30 });
    expect(await cache.get(cred, "1", short)).toBe("s-1");
    expect(await cache.get(cred, "1", short)).toBe("s-2");
    const failing = () => Promise.reject(new Error("down"));
    await expect(cache.get(cred, "2", failing)).rejects.toThrow("down");
    expect(await cache.get(cred, "2", async () => ({ token: "ok", expiresIn: 3600 }))).toBe("ok");
  });

  it("keys by version and caller, and forget drops a credential's or a tenant's tokens", async () => {
    const cache = new TokenCache();
    let n = 0;
    const fetch = async () => ({ token: `t-${++n}`, expiresIn: 3600 });
    expect(await cache.get(cred, "1\u0000callerA", fetch)).toBe("t-1");
    expect(await cache.get(cred, "1\u0000callerB", fetch)).toBe("t-2");
    expect(await cache.get(cred, "2\u0000callerA", fetch)).toBe("t-3");
    expect(await cache.get(cred, "1\u0000callerA", fetch)).toBe("t-1");
    const other = { tenantId: "t1", id: "cred_b" };
    expect(await cache.get(other, "1", fetch)).toBe("t-4");
    cache.forget("t1", "cred_a");
    expect(await cache.get(cred, "1\u0000callerA", fetch)).toBe("t-5");
    expect(await cache.get(other, "1", fetch)).toBe("t-4");
    cache.forget("t1");
    expect(await cache.get(other, "1", fetch)).toBe("t-6");
  });
});
