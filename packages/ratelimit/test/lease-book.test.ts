import { describe, expect, it } from "vitest";
import { type Lease, LeaseBook } from "../src/quota-lease-book.ts";

const lease = (): Lease => ({ window: 0, tokens: 1, until: 0, size: 1, asking: false, topUp: null });

describe("a replica's lease book", () => {
  it("finds a lease by tenant, policy version, rule and key value, and by nothing less", () => {
    const book = new LeaseBook();
    const l = lease();
    book.add("t", 1, "2", "k", l);
    expect(book.get("t", 1, "2", "k")).toBe(l);
    expect(book.get("t", 2, "2", "k")).toBeUndefined();
    expect(book.get("t", 1, "3", "k")).toBeUndefined();
    expect(book.get("t", 1, "2", "k2")).toBeUndefined();
    expect(book.get("u", 1, "2", "k")).toBeUndefined();
  });

  it("holds at most its bound: the oldest lease goes first", () => {
    const book = new LeaseBook(2);
    const [a, b, c] = [lease(), lease(), lease()];
    book.add("t1", 1, "1", "k", a);
    book.add("t2", 1, "1", "k", b);
    book.add("t2", 1, "1", "k2", c);
    expect(book.size).toBe(2);
    expect(book.get("t1", 1, "1", "k")).toBeUndefined();
    expect(book.get("t2", 1, "1", "k")).toBe(b);
    expect(book.get("t2", 1, "1", "k2")).toBe(c);
    // The dropped tenant is gone as a whole: a fresh lease there is filed anew.
    book.add("t1", 1, "1", "k", a);
    expect(book.get("t1", 1, "1", "k")).toBe(a);
    expect(book.get("t2", 1, "1", "k")).toBeUndefined();
  });
});
