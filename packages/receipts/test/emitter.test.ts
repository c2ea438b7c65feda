import { generateKeyPairSync } from "node:crypto";
import { Writable } from "node:stream";
import { createLogger, resetInstruments } from "@gw/telemetry";
import { metrics } from "@opentelemetry/api";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { createLocalJWKSet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReceiptEmitter, loadReceiptKey, type ReceiptSink, verifyReceipt } from "../src/index.ts";

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
const provider = new MeterProvider({ readers: [reader] });
beforeAll(() => {
  metrics.setGlobalMeterProvider(provider);
  resetInstruments();
});
afterAll(() => provider.shutdown());

async function failures(): Promise<number> {
  await reader.forceFlush();
  let n = 0;
  for (const rm of exporter.getMetrics().slice(-1))
    for (const sm of rm.scopeMetrics)
      for (const m of sm.metrics)
        if (m.descriptor.name === "gw.receipts.failures")
          for (const p of m.dataPoints) n += p.value as number;
  return n;
}

const lines: string[] = [];
const logger = createLogger({
  level: "info",
  service: "test",
  stream: new Writable({
    write(chunk, _e, cb) {
      lines.push(String(chunk));
      cb();
    },
  }),
});
const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
const event = { tenantId: "t1", invocationId: "inv_1", agentId: "agt_1", status: "succeeded" };

describe("receipt key", () => {
  it("derives the public key and an RFC 7638 kid; refuses what is not an Ed25519 private key", async () => {
    const key = await loadReceiptKey(JSON.stringify(jwk));
    expect(key.publicJwk).toEqual({
      kty: "OKP",
      crv: "Ed25519",
      x: jwk.x,
      kid: key.kid,
      alg: "EdDSA",
      use: "sig",
    });
    expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const bad of [
      "not json",
      "[]",
      JSON.stringify({ ...jwk, crv: "X25519" }),
      JSON.stringify({ kty: "OKP", crv: "Ed25519", x: jwk.x }),
      JSON.stringify({ ...jwk, x: generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }).x }),
      JSON.stringify({ ...jwk, d: "AAAA" }),
    ]) {
      const err = await loadReceiptKey(bad).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).not.toContain(jwk.d as string);
    }
  });
});

describe("receipt emitter: fail-open", () => {
  it("signs and hands a verifiable receipt to the sink, after the caller's turn", async () => {
    const key = await loadReceiptKey(JSON.stringify(jwk));
    const saved: Array<{ tenantId: string; jws: string; subjectId: string }> = [];
    const sink: ReceiptSink = { save: async (tenantId, row) => void saved.push({ tenantId, ...row }) };
    const emitter = createReceiptEmitter({ key, actor: "urn:gw:test", sink, logger });
    emitter.invocation({ ...event, digests: { request: "sha256:aa", response: "sha256:bb" } });
    // Deferred: nothing was signed on the caller's stack.
    expect(saved).toHaveLength(0);
    await emitter.drain(5_000);
    expect(saved).toHaveLength(1);
    const payload = await verifyReceipt(saved[0]?.jws as string, createLocalJWKSet(emitter.jwks));
    expect(payload).toMatchObject({
      actor: "urn:gw:test",
      action: "gateway.invocation",
      subject: "inv_1",
      tenant_id: "t1",
      agent_id: "agt_1",
      status: "succeeded",
      digests: { request: "sha256:aa", response: "sha256:bb" },
    });
    expect(payload.artifact_id).toMatch(/^rcpt_/);
  });

  it("a sink that throws: the call returns normally, the failure is counted and logged without the key", async () => {
    const key = await loadReceiptKey(JSON.stringify(jwk));
    const before = await failures();
    const emitter = createReceiptEmitter({
      key,
      actor: "urn:gw:test",
      logger,
      sink: {
        save: () => {
          throw new Error(`boom ${jwk.d}`);
        },
      },
    });
    for (let i = 0; i < 5; i++) {
      expect(() => emitter.invocation(event)).not.toThrow();
      expect(() =>
        emitter.decision({ tenantId: "t1", decisionId: "pdec_1", agentId: "a", action: "deny" }),
      ).not.toThrow();
    }
    await emitter.drain(5_000);
    expect((await failures()) - before).toBe(10);
    expect(lines.join("")).toContain("receipt not emitted");
    expect(lines.join("")).not.toContain(jwk.d as string);
  });

  it("a sink that hangs: slots time out and are freed, the queue sheds beyond its bound, callers never wait", async () => {
    const key = await loadReceiptKey(JSON.stringify(jwk));
    const before = await failures();
    let started = 0;
    const emitter = createReceiptEmitter({
      key,
      actor: "urn:gw:test",
      logger,
      maxConcurrent: 2,
      maxQueued: 3,
      taskTimeoutMs: 50,
      sink: {
        save: () => {
          started++;
          return new Promise(() => {});
        },
      },
    });
    // 10 events: 3 queue (the first turn has not run yet), 7 are shed at once.
    for (let i = 0; i < 10; i++) emitter.invocation(event);
    expect((await failures()) - before).toBe(7);
    await emitter.drain(5_000);
    expect(started).toBe(3);
    expect((await failures()) - before).toBe(10);
  });
});
