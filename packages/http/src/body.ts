import type { IncomingMessage } from "node:http";
import { bytesText, DomainError, invalid, LIMITS, ruleOf, tooLarge } from "@gw/core";
import type { Context } from "hono";
import * as v from "valibot";
import { assertNoNul } from "./text.ts";

/** The 413 of a body over `maxBytes`: it names the limit (docs/interface.md, Errors). */
export const bodyTooLarge = (maxBytes: number) =>
  tooLarge(`request body is larger than ${bytesText(maxBytes)}`);

/** Reads the request body counting bytes as they arrive; Content-Length alone is never trusted. */
export async function readBodyCapped(req: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(req.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw bodyTooLarge(maxBytes);
  if (!req.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw bodyTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, size);
}

/** A field name from the body as a message quotes it: a long key is cut, so no input is echoed whole. */
const KEY_MAX = 64;
const keyOf = (key: unknown) => {
  const k = String(key);
  return k.length > KEY_MAX ? `${k.slice(0, KEY_MAX)}…` : k;
};

/**
 * The first valibot issue as a caller-actionable message: the field's path and the rule, in our
 * words (the schema's own message, else `ruleOf`), never the value received.
 */
export function issueMessage(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  if (!issue) return "invalid request";
  const path = issue.path?.map((p) => keyOf(p.key)).join(".") ?? "";
  // Object schemas report both an unknown key (expected "never") and a missing one (received
  // "undefined") as their own issue; only the first is an unknown field.
  if ((issue.type === "strict_object" || issue.type === "object") && issue.path) {
    if (issue.expected === "never") return `unknown field "${path}"`;
    if (issue.received === "undefined") return `${path} is required`;
  }
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** Validates with valibot and throws `invalid` with a message naming the field and the rule. */
export function validate<const S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortEarly: true, message: ruleOf });
  if (!result.success) throw invalid(issueMessage(result.issues));
  return result.output;
}

/**
 * Reads a JSON body: size cap (413), JSON syntax (400), no NUL in any string or key (400, see
 * `assertNoNul`), schema with unknown-field rejection (400).
 */
export async function readJson<const S extends v.GenericSchema>(
  // biome-ignore lint/suspicious/noExplicitAny: any Hono env may use the reader.
  c: Context<any>,
  schema: S,
  maxBytes: number = LIMITS.jsonBodyMaxBytes,
  /** A body whose fields are all optional may be left out: an empty body reads as `{}`. */
  opts: { optional?: boolean } = {},
): Promise<v.InferOutput<S>> {
  const type = c.req.header("content-type") ?? "";
  if (type && !/^application\/(.+\+)?json\b/i.test(type)) {
    throw new DomainError("invalid", "content-type must be application/json");
  }
  const bytes = await readBodyCapped(c.req.raw, maxBytes);
  if (opts.optional && bytes.byteLength === 0) return validate(schema, {});
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch {
    throw invalid("request body must be valid JSON");
  }
  // Every write body of this API is one JSON object; valibot's object schemas would let an array
  // through as an object with no keys (an empty PATCH).
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw invalid("request body must be a JSON object");
  }
  assertNoNul(parsed);
  return validate(schema, parsed);
}

/**
 * Reads a Node request body counting bytes as they arrive (413 past `maxBytes`). The stream is
 * never destroyed: past the cap the rest is left to drain, so the caller still gets the 413 on an
 * intact connection.
 */
export function readNodeBodyCapped(incoming: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(incoming.headers["content-length"] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.reject(bodyTooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        incoming.resume();
        reject(bodyTooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (e: Error) => {
      cleanup();
      reject(e);
    };
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
  });
}
