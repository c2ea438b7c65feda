import { Writable } from "node:stream";
import { createLogger } from "@gw/telemetry";
import { describe, expect, it } from "vitest";
import { createBaseApp } from "../src/index.ts";

function capture() {
  let out = "";
  const stream = new Writable({
    write(chunk, _enc, cb) {
      out += chunk.toString();
      cb();
    },
  });
  return { logger: createLogger({ level: "info", service: "t", stream: stream as never }), text: () => out };
}

/** The shape of a postgres-js error wrapped by drizzle, as a failed credential insert throws it. */
function driverError() {
  const pg = Object.assign(new Error('invalid input syntax for type bytea: "CIPHERTEXT-aGVsbG8"'), {
    name: "PostgresError",
    code: "22P02",
    query: "insert into credentials values ($1, $2, $3)",
    parameters: ["cred_x", "CIPHERTEXT-aGVsbG8", "WRAPPED-KEY-d29ybGQ"],
    detail: "HINT-VALUE-1234",
  });
  return Object.assign(
    new Error(
      "Failed query: insert into credentials values ($1, $2, $3)\nparams: cred_x,CIPHERTEXT-aGVsbG8,WRAPPED-KEY-d29ybGQ",
    ),
    { name: "DrizzleQueryError", params: pg.parameters, cause: pg },
  );
}

describe("the one error logger", () => {
  it("answers 500 with no body and logs name, code and frames, never values", async () => {
    const { logger, text } = capture();
    const app = createBaseApp({ logger });
    app.get("/boom", () => {
      throw driverError();
    });
    const res = await app.request("/boom?token=QUERY-SECRET");
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("");
    const log = text();
    expect(log).toContain('"name":"DrizzleQueryError"');
    expect(log).toContain('"code":"22P02"');
    expect(log).toContain("    at ");
    for (const value of ["CIPHERTEXT", "WRAPPED-KEY", "HINT-VALUE", "QUERY-SECRET", "params:"]) {
      expect(log).not.toContain(value);
    }
    // The access line names the path without its query string.
    expect(log).toContain('"path":"/boom"');
  });

  it("keeps driver fields out of any log line that carries an error object", () => {
    const { logger, text } = capture();
    const e = driverError();
    logger.error({ err: e }, "as err");
    logger.error({ error: e.message }, "as a message");
    logger.error({ e }, "under another key");
    logger.error({ ctx: { failure: e.cause } }, "nested");
    for (const value of ["CIPHERTEXT", "WRAPPED-KEY", "HINT-VALUE"]) expect(text()).not.toContain(value);
  });

  it("answers 400 naming the parameter for a NUL in a query string", async () => {
    const { logger } = capture();
    const app = createBaseApp({ logger });
    app.get("/list", (c) => c.json({ ok: true }));
    const res = await app.request("/list?agent_id=%00");
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "agent_id must not contain NUL characters" });
    expect((await app.request("/list?a%00=1")).status).toBe(400);
    expect((await app.request("/list?agent_id=x")).status).toBe(200);
  });
});
