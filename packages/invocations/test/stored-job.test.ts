import { describe, expect, it } from "vitest";
import { jobOf, type StoredJob } from "../src/stored-job.ts";

const stored: StoredJob = {
  invocationId: "inv_1",
  tenantId: "ten_1",
  agentId: "agt_1",
  upstreamUrl: "http://127.0.0.1:9/echo",
  credentialRef: null,
  protocol: "mcp",
  mcpMethod: "tools/list",
  mcpRequestId: 7,
  captureBodies: false,
  emitReceipts: null,
  headers: ["content-type", "application/json"],
  clientAddress: "127.0.0.1",
};
const body = Buffer.from("{}");

describe("a stored request is checked when a worker claims it", () => {
  it("a stored call as the proxy wrote it (through jsonb) becomes the job, with its body", () => {
    const job = jobOf(JSON.parse(JSON.stringify(stored)), body);
    expect(job).toEqual({ ...stored, body });
  });

  it("a call stored before mcpRequestId existed still parses", () => {
    const { mcpRequestId: _, ...old } = stored;
    expect(jobOf(old, body)?.mcpRequestId).toBeUndefined();
  });

  it.each([
    ["not an object", "job"],
    ["an unknown protocol", { ...stored, protocol: "ftp" }],
    ["headers that are not a list", { ...stored, headers: "content-type: text/plain" }],
    ["no upstream", { ...stored, upstreamUrl: undefined }],
    ["an upstream that is not a URL", { ...stored, upstreamUrl: "nowhere" }],
    ["a payment without its facts", { ...stored, payment: { version: 2 } }],
  ])("%s is no call: null, never a guess", (_, job) => {
    expect(jobOf(job, body)).toBeNull();
  });
});
