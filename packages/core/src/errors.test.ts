import { describe, expect, it } from "vitest";
import { DomainError, isStoreUnavailable, StoreDeadline } from "./errors.ts";

// "The store cannot be reached" vs "this statement is wrong" (docs/reliability.md): the first is a 503
// and a reason to retry a record write; the second is a bug, a 500, and must never be retried.

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });
const refused = () => coded("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED");
/** What drizzle's query builder throws: its own error, the driver's as `cause`. */
const failedQuery = (cause: unknown) => new Error("Failed query: select 1\nparams: ", { cause });

describe("isStoreUnavailable", () => {
  it("reads the driver's code at the top", () => {
    for (const code of [
      "ECONNREFUSED",
      "ECONNRESET",
      "CONNECTION_CLOSED",
      "CONNECT_TIMEOUT",
      "57P01",
      "53300",
    ]) {
      expect(isStoreUnavailable(coded("down", code)), code).toBe(true);
    }
    // Postgres class 08: connection exception, whatever the subclass.
    expect(isStoreUnavailable(coded("connection failure", "08006"))).toBe(true);
    expect(isStoreUnavailable(new StoreDeadline())).toBe(true);
  });

  it("follows a wrapped cause chain (the query builder's error around the driver's)", () => {
    expect(isStoreUnavailable(failedQuery(refused()))).toBe(true);
    // Wrapped again by whoever rethrew it.
    expect(isStoreUnavailable(new Error("policy load failed", { cause: failedQuery(refused()) }))).toBe(true);
    expect(isStoreUnavailable(failedQuery(coded("write CONNECTION_CLOSED", "CONNECTION_CLOSED")))).toBe(true);
  });

  it("reads an AggregateError's errors (a refused dual-stack connect), also as a cause", () => {
    const both = new AggregateError(
      [coded("connect ECONNREFUSED ::1:5432", "ECONNREFUSED"), refused()],
      "connect failed",
    );
    expect(isStoreUnavailable(both)).toBe(true);
    expect(isStoreUnavailable(failedQuery(both))).toBe(true);
    // One address unreachable among errors that say nothing is enough.
    expect(isStoreUnavailable(new AggregateError([new Error("?"), refused()]))).toBe(true);
  });

  it("a bug is not the store being down, wrapped or not", () => {
    expect(isStoreUnavailable(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(
      false,
    );
    expect(isStoreUnavailable(new DomainError("invalid", "name: required"))).toBe(false);
    // Statements the store answered, refusing them: undefined table, unique violation, bad input.
    for (const code of ["42P01", "23505", "22P02", "40001"]) {
      const pg = coded("statement refused", code);
      expect(isStoreUnavailable(pg), code).toBe(false);
      expect(isStoreUnavailable(failedQuery(pg)), `wrapped ${code}`).toBe(false);
    }
    expect(isStoreUnavailable(new AggregateError([new Error("a"), coded("b", "23505")]))).toBe(false);
    // A message that names a connection error is not a code.
    expect(isStoreUnavailable(new Error("connect ECONNREFUSED 127.0.0.1:5432"))).toBe(false);
    for (const x of [null, undefined, "ECONNREFUSED", 42, { code: 57 }, { errors: "ECONNREFUSED" }]) {
      expect(isStoreUnavailable(x), String(x)).toBe(false);
    }
  });

  it("a cycle of causes ends (false), however it was built", () => {
    const a = new Error("a") as Error & { cause?: unknown };
    const b = new Error("b", { cause: a });
    a.cause = b;
    expect(isStoreUnavailable(a)).toBe(false);
  });
});
