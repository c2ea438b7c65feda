import { execFile } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { generateSigningKey, mintBundle, requestDigest } from "../src/bundle/index.ts";
import { runVerifier } from "../src/run.ts";
import { installReferenceVerifier, type ReferenceVerifier } from "../src/testing/index.ts";

const binding = {
  request: { tool: "echo", arguments: { text: "hi", n: 1.5 } },
  mission: { principal: "user-1", constraints: { "gateway.tenant_id": "t1", "gateway.agent_id": "agt_1" } },
};

describe("gw-verify (reference verifier) as GW_VERIFIER_BINARY", () => {
  let ref: ReferenceVerifier;
  beforeAll(async () => {
    ref = await installReferenceVerifier();
  });
  const run = (bundle: unknown) =>
    runVerifier(ref.binary, Buffer.from(typeof bundle === "string" ? bundle : JSON.stringify(bundle)));

  it("installs a wrapper that names every path absolutely", () => {
    const wrapper = readFileSync(ref.binary, "utf8");
    expect(statSync(ref.binary).mode & 0o111).not.toBe(0);
    const exec = wrapper.split("\n").find((l) => l.startsWith("exec "));
    expect(exec).toMatch(/^exec '\/[^']+' '\/[^']+\/gw-verify\.mjs' --keys '\/[^']+' "\$@"$/);
    expect(existsSync(join(ref.dir, "bin", "gw-verify.mjs"))).toBe(true);
  });

  it("verifies a signed bundle with an empty environment and prints the output contract", async () => {
    const bundle = ref.mint(binding);
    const result = await run(bundle);
    expect(result).toEqual({
      ok: true,
      output: {
        status: "verified",
        authorization_status: "authorized",
        request_digest: requestDigest(bundle),
        ...binding,
      },
    });
  });

  it("gives two bundles for the same action two digests (the nonce)", () => {
    expect(requestDigest(ref.mint(binding))).not.toBe(requestDigest(ref.mint(binding)));
  });

  it("verifies the bundle whatever its member order and whitespace", async () => {
    const { signature, ...rest } = ref.mint(binding);
    const reordered = `{ "signature": ${JSON.stringify(signature)},\n ${JSON.stringify(rest, null, 2).slice(1)}`;
    expect((await run(reordered)).ok).toBe(true);
  });

  const tampered: Array<[string, (b: Record<string, unknown>) => unknown]> = [
    [
      "changed arguments",
      (b) => ({ ...b, request: { tool: "echo", arguments: { text: "rm -rf /", n: 1.5 } } }),
    ],
    ["a changed tool", (b) => ({ ...b, request: { ...(b.request as object), tool: "delete" } })],
    ["a changed principal", (b) => ({ ...b, mission: { ...(b.mission as object), principal: "mallory" } })],
    ["a changed expiry", (b) => ({ ...b, expires_at: "2999-01-01T00:00:00.000Z" })],
    [
      "a zeroed signature",
      (b) => ({ ...b, signature: { ...(b.signature as object), value: "A".repeat(86) } }),
    ],
    ["an unknown kid", (b) => ({ ...b, signature: { ...(b.signature as object), kid: "other" } })],
    ["an extra member", (b) => ({ ...b, note: "x" })],
    ["a missing nonce", ({ nonce: _n, ...b }) => b],
    ["the wrong schema", (b) => ({ ...b, schema: "gw.verifier.authorization-bundle.v2" })],
  ];

  it.each(tampered)("rejects %s (non-zero exit)", async (_name, change) => {
    const bundle = change(ref.mint(binding) as unknown as Record<string, unknown>);
    expect(await run(bundle)).toEqual({ ok: false, reason: "exit_status" });
  });

  it("rejects a bundle signed by an untrusted key", async () => {
    const { privateJwk } = generateSigningKey("test-key"); // same kid, other key
    expect(await run(mintBundle({ ...binding, privateJwk }))).toEqual({ ok: false, reason: "exit_status" });
  });

  it("rejects an expired bundle and one issued in the future", async () => {
    const expired = ref.mint({ ...binding, now: new Date(Date.now() - 3_600_000), ttlSeconds: 60 });
    expect((await run(expired)).ok).toBe(false);
    const future = ref.mint({ ...binding, now: new Date(Date.now() + 3_600_000) });
    expect((await run(future)).ok).toBe(false);
  });

  it("rejects duplicate keys inside the bundle, nested too", async () => {
    const text = JSON.stringify(ref.mint(binding)).replace('"text":"hi"', '"text":"hi","text":"hi"');
    expect(await run(text)).toEqual({ ok: false, reason: "exit_status" });
  });

  it("rejects garbage and oversized input", async () => {
    expect((await run("not json")).ok).toBe(false);
    expect((await run("")).ok).toBe(false);
  });
});

describe("gw-verify CLI", () => {
  const tsx = join(import.meta.dirname, "../../../node_modules/.bin/tsx");
  const cli = join(import.meta.dirname, "../src/cli/gw-verify.ts");
  const exec = promisify(execFile);

  it("keygen writes a private JWK (0600) and prints the public one; mint --envelope prints a request body", async () => {
    const ref = await installReferenceVerifier();
    const keyFile = join(ref.dir, "signing.jwk");
    const { stdout: pub } = await exec(tsx, [cli, "keygen", "--kid", "ops-1", "--out", keyFile]);
    expect(JSON.parse(pub)).toEqual({ kty: "OKP", crv: "Ed25519", x: expect.any(String), kid: "ops-1" });
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(pub).not.toContain('"d"');
    const { stdout } = await exec(tsx, [
      cli,
      "mint",
      "--key",
      keyFile,
      "--tool",
      "echo",
      "--arguments",
      '{"text":"hi"}',
      "--principal",
      "user-1",
      "--tenant",
      "t1",
      "--agent",
      "agt_1",
      "--envelope",
    ]);
    const env = JSON.parse(stdout);
    expect(Object.keys(env)).toEqual(["schema", "call", "authorization"]);
    expect(env.call).toEqual({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" } },
    });
    expect(env.authorization.mission.constraints).toEqual({
      "gateway.tenant_id": "t1",
      "gateway.agent_id": "agt_1",
    });
  });

  it("exits 2 on a usage error", async () => {
    await expect(exec(tsx, [cli, "verify", "--format", "text", "-"])).rejects.toMatchObject({ code: 2 });
    await expect(exec(tsx, [cli, "nonsense"])).rejects.toMatchObject({ code: 2 });
  });
});
