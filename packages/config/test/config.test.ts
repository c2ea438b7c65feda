import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/index.ts";

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const c = loadConfig({}, { defaultPort: 8080 });
    expect(c.port).toBe(8080);
    expect(c.publicUrl).toBe("http://localhost:8080");
    expect(c.store).toBe("memory");
    expect(c.GW_RATE_LIMIT_RPS).toBe(10);
    expect(c.GW_RATE_LIMIT_BURST).toBe(20);
    expect(c.GW_SETTLE_THEN_FORWARD).toBe(true);
    expect(c.GW_ALLOW_HTTP_UPSTREAMS).toBe(false);
    expect(c.GW_JWT_TENANT_CLAIM).toBe("tenant_id");
    expect(Object.isFrozen(c)).toBe(true);
  });

  it("reads a postgres store and lists", () => {
    const c = loadConfig(
      { DATABASE_URL: "postgres://u@h/db", GW_SSRF_ALLOW_CIDRS: "127.0.0.0/8, ::1/128", PORT: "9000" },
      { defaultPort: 8080 },
    );
    expect(c.store).toBe("postgres");
    expect(c.GW_SSRF_ALLOW_CIDRS).toEqual(["127.0.0.0/8", "::1/128"]);
    expect(c.port).toBe(9000);
  });

  it("reads the OAuth authorization servers as a list (empty when unset)", () => {
    expect(loadConfig({}, { defaultPort: 1 }).GW_OAUTH_AUTHORIZATION_SERVERS).toEqual([]);
    const c = loadConfig(
      { GW_OAUTH_AUTHORIZATION_SERVERS: "https://a.example , https://b.example/tenant" },
      { defaultPort: 1 },
    );
    expect(c.GW_OAUTH_AUTHORIZATION_SERVERS).toEqual(["https://a.example", "https://b.example/tenant"]);
  });

  it.each([
    [{ GW_RATE_LIMIT_BURST: "lots" }, "GW_RATE_LIMIT_BURST"],
    [{ GW_KMS_KEY: "c2hvcnQ=" }, "GW_KMS_KEY"],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
    [{ GW_ALLOW_HTTP_UPSTREAMS: "yes" }, "GW_ALLOW_HTTP_UPSTREAMS"],
    [{ GW_DEV_JWT_SECRET: "short" }, "GW_DEV_JWT_SECRET"],
    [{ PORT: "99999" }, "PORT"],
    [{ GW_VERIFIER_BINARY: "gw-verify" }, "GW_VERIFIER_BINARY"],
    [{ GW_VERIFIER_BINARY: "/nonexistent/gw-verify" }, "GW_VERIFIER_BINARY"],
    [{ GW_VERIFIER_BINARY: "/etc/passwd" }, "GW_VERIFIER_BINARY"],
    [{ GW_VERIFIER_BINARY: "/usr/bin" }, "GW_VERIFIER_BINARY"],
    [{ GW_OAUTH_AUTHORIZATION_SERVERS: "issuer.example" }, "GW_OAUTH_AUTHORIZATION_SERVERS"],
    [
      { GW_OAUTH_AUTHORIZATION_SERVERS: "https://a.example, ftp://b.example" },
      "GW_OAUTH_AUTHORIZATION_SERVERS",
    ],
  ])("rejects %o naming the variable", (env, name) => {
    expect(() => loadConfig(env, { defaultPort: 1 })).toThrow(ConfigError);
    expect(() => loadConfig(env, { defaultPort: 1 })).toThrow(new RegExp(`^invalid configuration: ${name} `));
  });

  it("accepts an absolute path of an executable file as the verifier", () => {
    expect(loadConfig({ GW_VERIFIER_BINARY: "/bin/sh" }, { defaultPort: 1 }).GW_VERIFIER_BINARY).toBe(
      "/bin/sh",
    );
  });

  it("never echoes the bad value", () => {
    try {
      loadConfig({ GW_KMS_KEY: "c2VjcmV0LXZhbHVl" }, { defaultPort: 1 });
      expect.unreachable();
    } catch (e) {
      expect(String(e)).not.toContain("c2VjcmV0LXZhbHVl");
    }
  });
});
