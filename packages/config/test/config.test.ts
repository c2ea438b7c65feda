import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, normalOrigin } from "../src/index.ts";

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const c = loadConfig({}, { defaultPort: 8080 });
    expect(c.port).toBe(8080);
    expect(c.publicUrl).toBe("http://localhost:8080");
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
    expect(c.DATABASE_URL).toBe("postgres://u@h/db");
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

  it("allows GW_PUBLIC_URL's origin and GW_ALLOWED_ORIGINS, normalised", () => {
    expect([...loadConfig({}, { defaultPort: 8080 }).allowedOrigins]).toEqual(["http://localhost:8080"]);
    const c = loadConfig(
      {
        GW_PUBLIC_URL: "https://GW.example.com:443/base/",
        GW_ALLOWED_ORIGINS: " HTTP://App.Example:80 , https://tool.example:8443/,,http://[::1]:3000",
      },
      { defaultPort: 1 },
    );
    expect(c.GW_ALLOWED_ORIGINS).toEqual([
      "http://app.example",
      "https://tool.example:8443",
      "http://[::1]:3000",
    ]);
    expect([...c.allowedOrigins]).toEqual([
      "https://gw.example.com",
      "http://app.example",
      "https://tool.example:8443",
      "http://[::1]:3000",
    ]);
  });

  it("reads an origin as a browser sends it, or nothing", () => {
    expect(normalOrigin("https://a.example")).toBe("https://a.example");
    expect(normalOrigin("HTTPS://A.EXAMPLE:443")).toBe("https://a.example");
    expect(normalOrigin("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080");
    for (const bad of [
      "null",
      "",
      "a.example",
      "https://a.example/",
      "https://a.example/x",
      "https://a.example?x",
      "https://u:p@a.example",
      "ftp://a.example",
      "file://a",
      "https://a example",
      "https://",
      "http://a.example:99999",
    ]) {
      expect(normalOrigin(bad), bad).toBeNull();
    }
  });

  it.each([
    [{ GW_ALLOWED_ORIGINS: "app.example.com" }, "GW_ALLOWED_ORIGINS"],
    [{ GW_ALLOWED_ORIGINS: "https://a.example, https://b.example/path" }, "GW_ALLOWED_ORIGINS"],
    [{ GW_ALLOWED_ORIGINS: "*" }, "GW_ALLOWED_ORIGINS"],
    [{ GW_ALLOWED_ORIGINS: "null" }, "GW_ALLOWED_ORIGINS"],
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

  it("states the whole rule of a number, whichever way a value misses it", () => {
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig(env, { defaultPort: 8080 });
        return "";
      } catch (e) {
        return (e as Error).message;
      }
    };
    for (const value of ["-5", "0", "2.5", "abc", "2000000"]) {
      expect(refusal({ GW_RATE_LIMIT_BURST: value })).toBe(
        "invalid configuration: GW_RATE_LIMIT_BURST must be a whole number from 1 to 1000000",
      );
    }
    for (const value of ["-1", "0", "x"]) {
      expect(refusal({ GW_RATE_LIMIT_RPS: value })).toBe(
        "invalid configuration: GW_RATE_LIMIT_RPS must be a number, at least 0.001",
      );
    }
    expect(refusal({ GW_LOG_LEVEL: "loud" })).toBe(
      "invalid configuration: GW_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent",
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
  describe("console sign-in (GW_OIDC_*)", () => {
    const jwks = { GW_JWKS_URL: "https://idp.example/jwks" };

    it("is off by default and reads the issuer, client and scopes when set", () => {
      const off = loadConfig({}, { defaultPort: 1 });
      expect(off.GW_OIDC_ISSUER).toBeUndefined();
      expect(off.GW_OIDC_SCOPES).toEqual([]);
      const c = loadConfig(
        {
          ...jwks,
          GW_OIDC_ISSUER: "https://idp.example/realms/ops",
          GW_OIDC_CLIENT_ID: "gateway-console",
          GW_OIDC_SCOPES: "profile, agents:read  email",
        },
        { defaultPort: 1 },
      );
      expect(c.GW_OIDC_ISSUER).toBe("https://idp.example/realms/ops");
      expect(c.GW_OIDC_CLIENT_ID).toBe("gateway-console");
      expect(c.GW_OIDC_SCOPES).toEqual(["profile", "agents:read", "email"]);
    });

    it.each(["http://127.0.0.1:8081", "http://localhost:8081/realms/dev", "http://[::1]:8081"])(
      "accepts http on a loopback address (%s)",
      (issuer) => {
        const c = loadConfig({ ...jwks, GW_OIDC_ISSUER: issuer, GW_OIDC_CLIENT_ID: "c" }, { defaultPort: 1 });
        expect(c.GW_OIDC_ISSUER).toBe(issuer);
      },
    );

    it.each([
      [{ GW_OIDC_ISSUER: "http://idp.example" }, "GW_OIDC_ISSUER must use https"],
      [{ GW_OIDC_ISSUER: "http://10.0.0.5" }, "GW_OIDC_ISSUER must use https"],
      [{ GW_OIDC_ISSUER: "idp.example" }, "GW_OIDC_ISSUER must be a URL"],
      [{ GW_OIDC_ISSUER: "ftp://idp.example" }, "GW_OIDC_ISSUER must use https"],
      [{ GW_OIDC_ISSUER: "https://idp.example/?realm=x" }, "GW_OIDC_ISSUER must not carry"],
      [{ GW_OIDC_ISSUER: "https://u:p@idp.example" }, "GW_OIDC_ISSUER must not carry"],
      [{ GW_OIDC_CLIENT_ID: "has space" }, "GW_OIDC_CLIENT_ID must be"],
      [{ GW_OIDC_SCOPES: 'openid "quoted"' }, "GW_OIDC_SCOPES must be OAuth scope names"],
      [
        { GW_OIDC_ISSUER: "https://idp.example", GW_OIDC_CLIENT_ID: undefined },
        "GW_OIDC_ISSUER and GW_OIDC_CLIENT_ID must be set together",
      ],
    ])("rejects %o with one line naming the variable", (bad, message) => {
      const env = { ...jwks, GW_OIDC_ISSUER: "https://idp.example", GW_OIDC_CLIENT_ID: "c", ...bad };
      expect(() => loadConfig(env, { defaultPort: 1 })).toThrow(ConfigError);
      expect(() => loadConfig(env, { defaultPort: 1 })).toThrow(
        new RegExp(`^invalid configuration: ${message}`),
      );
    });

    it("refuses scopes without an issuer, and an issuer without a JWKS to verify its tokens", () => {
      expect(() => loadConfig({ GW_OIDC_SCOPES: "profile" }, { defaultPort: 1 })).toThrow(
        "invalid configuration: GW_OIDC_SCOPES needs GW_OIDC_ISSUER and GW_OIDC_CLIENT_ID",
      );
      expect(() =>
        loadConfig({ GW_OIDC_ISSUER: "https://idp.example", GW_OIDC_CLIENT_ID: "c" }, { defaultPort: 1 }),
      ).toThrow(/^invalid configuration: GW_OIDC_ISSUER needs GW_JWKS_URL/);
    });
  });
});
