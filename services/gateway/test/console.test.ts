// @stores once: the console in a browser; the routes it calls are covered by the control plane's suites.
// The operator console in a real headless Chromium against the real all-in-one gateway.
// Chromium: Debian's `chromium` package (.ci/run installs it). Without it the suite is skipped,
// with the reason printed, on a developer machine only: under CI=true a missing browser fails.
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  client,
  newTenant,
  startA2aUpstream,
  startMcpV1Server,
  startMcpV2Server,
  startToolsUpstream,
  type TestApp,
  TOOL_CORPUS,
  token,
  type Upstream,
} from "@gw/testkit";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Caller,
  caller,
  pollDone,
  recordDone,
  spawnGateway,
  startGateway,
  upstreamPool,
} from "./helpers.ts";

const CHROMIUM = process.env.GW_CHROMIUM_PATH ?? "/usr/bin/chromium";
const inCi = process.env.CI === "true";
const skipReason = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set GW_CHROMIUM_PATH)`;
if (skipReason && !inCi) console.warn(`console browser tests skipped: ${skipReason}`);

const ARTIFACTS = fileURLToPath(new URL("../../../.artifacts/console/", import.meta.url));
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 375, height: 812 };

let gw: TestApp;
let call: Caller;
let upstream: Upstream;
let browser: Browser;
const pool = upstreamPool();

/** A page that records every console error and uncaught exception (CSP violations included). */
async function newPage(viewport = DESKTOP): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  return { page, errors };
}

async function shot(page: Page, name: string) {
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}

async function signIn(page: Page, who: Caller = call) {
  await page.goto(`${gw.url}/console`);
  await page.getByLabel("Access token").fill(who.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect.poll(() => page.getByTestId("identity").textContent()).toContain(who.tenant);
}

/** Width of the whole document: wider than the viewport means the page scrolls sideways. */
async function pageWidth(page: Page): Promise<number> {
  // A string runs in the page; this file is typed for Node, not the DOM.
  return (await page.evaluate("document.documentElement.scrollWidth")) as number;
}

/** Pixels of the throughput chart's canvas that uPlot inked in a series colour (blue-ish). */
const INKED_PIXELS = `(() => {
  const c = document.querySelector('[data-testid="chart-Throughput"] canvas');
  const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < px.length; i += 4) if (px[i + 3] > 0 && px[i + 2] > px[i] + 40) n++;
  return n;
})()`;

/**
 * The colour the browser filled an element's gauge with: the commonest saturated colour of its
 * pixels (grey track and white background aside), decoded from a screenshot by a blank page.
 */
async function gaugeColour(gauge: Locator): Promise<"red" | "amber" | "green" | "none"> {
  const png = await gauge.screenshot();
  const blank = await browser.newPage();
  try {
    const [r, g, b] = (await blank.evaluate(`(async () => {
      const bytes = Uint8Array.from(atob(${JSON.stringify(png.toString("base64"))}), (c) => c.charCodeAt(0));
      const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/png" }));
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
      const ctx = canvas.getContext("2d");
      ctx.drawImage(bitmap, 0, 0);
      const px = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
      const counts = new Map();
      for (let i = 0; i < px.length; i += 4) {
        if (Math.max(px[i], px[i + 1], px[i + 2]) - Math.min(px[i], px[i + 1], px[i + 2]) < 80) continue;
        const key = px[i] + "," + px[i + 1] + "," + px[i + 2];
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      const top = [...counts].sort((a, b) => b[1] - a[1])[0];
      return top ? top[0].split(",").map(Number) : [];
    })()`)) as number[];
    if (r === undefined || g === undefined || b === undefined) return "none";
    if (g > r + 50 && g > b + 50) return "green";
    if (r > 180 && g > 120 && b < 90) return "amber";
    if (r > 160 && g < 110 && b < 90) return "red";
    return "none";
  } finally {
    await blank.close();
  }
}

async function surfaces(): Promise<Record<string, boolean>> {
  const res = await call("GET", "/v1/capabilities");
  return res.json.surfaces;
}

describe.skipIf(skipReason !== undefined && !inCi)("operator console in Chromium", () => {
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    gw = await startGateway();
    call = await caller(gw, ["invocations:read_body"]);
    upstream = await pool.up((_req, res, body) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ echoed: body.toString("utf8") }));
    });
    // No sandbox: CI runs as root, where Chromium's sandbox cannot start. The page is our own.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await pool.closeAll();
  });

  it("signs in, creates an agent, shows a proxied call with status and latency, and opens its detail", async () => {
    const { page, errors } = await newPage();
    await page.goto(`${gw.url}/console`);
    await shot(page, "01-sign-in");
    // A bad token is refused with the sign-in screen's own message, not a crash.
    await page.getByLabel("Access token").fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("token was rejected");
    errors.length = 0; // the browser logs the 401 of that refused attempt; it was the point
    // Keyboard only: type the token, Tab to the button, Enter.
    const field = page.getByLabel("Access token");
    await field.fill("");
    await field.focus();
    await page.keyboard.type(call.token);
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Sign in");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByTestId("identity").textContent()).toContain(call.tenant);
    await expect.poll(() => page.locator("main").textContent()).toContain("invocations:read_body");
    await shot(page, "02-overview");

    // Create an agent through the form; first with a URL the API refuses: its own error is shown.
    await page.getByRole("link", { name: "Agents" }).click();
    await page.getByRole("link", { name: "New agent" }).click();
    await page.getByLabel("Name").fill("console-echo");
    await page.getByLabel("Upstream URL").fill("ftp://example.com/");
    await page.getByRole("button", { name: "Create agent" }).click();
    const refused = await call("POST", "/v1/agents", { name: "x", upstream_url: "ftp://example.com/" });
    expect(refused.status).toBe(400);
    await expect.poll(() => page.getByRole("alert").textContent()).toBe(refused.json.error);
    errors.length = 0; // that 400 was asked for
    await page.getByLabel("Upstream URL").fill(upstream.url);
    await page.getByLabel("Capture request and response bodies").check();
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.waitForURL(/#\/agents\/agt_/);
    const agentId = /#\/agents\/(agt_[\w-]+)/.exec(page.url())?.[1] ?? "";
    const stored = await call("GET", `/v1/agents/${agentId}`);
    expect(stored.json).toMatchObject({
      name: "console-echo",
      upstream_url: `${upstream.url}/`,
      capture_bodies: true,
    });
    await shot(page, "03-agent");

    // A call through the proxy, made the way a client makes it.
    const sent = await call("POST", `/v1/proxy/${agentId}`, '{"q":"hello console"}', {
      "content-type": "application/json",
    });
    expect(sent.status).toBe(202);
    const invId = sent.json.invocation_id as string;
    const done = await pollDone(call, agentId, invId);
    expect(done.json.status).toBe("succeeded");

    await page.getByRole("link", { name: "Invocations", exact: true }).first().click();
    const row = page.locator(`tr[data-id="${invId}"]`);
    await expect.poll(() => row.count()).toBe(1);
    const rowText = (await row.textContent()) ?? "";
    expect(rowText).toContain("console-echo");
    expect(rowText).toContain("succeeded");
    expect(rowText).toContain(`${done.json.latency_ms} ms`);
    await shot(page, "04-invocations");

    // Filters go to the API: a status the call does not have hides it.
    await page.getByLabel("Status").selectOption("failed");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => page.locator("main").textContent()).toContain("No invocations match.");
    await page.getByRole("link", { name: "Clear" }).click();
    await expect.poll(() => row.count()).toBe(1);

    await row.getByRole("link").click();
    await page.waitForURL(new RegExp(`#/invocations/${invId}`));
    await expect.poll(() => page.getByTestId("poll-body").textContent()).toContain("hello console");
    const detail = (await page.locator("main").textContent()) ?? "";
    expect(detail).toContain(invId);
    expect(detail).toContain("Request body");
    expect(detail).toContain('{"q":"hello console"}');
    expect(detail).toContain("application/json");
    // The agent by its name, linked, with its id beside it.
    const agentRef = page.getByTestId("agent-ref").first();
    await expect.poll(() => agentRef.getByRole("link").textContent()).toBe("console-echo");
    expect(await agentRef.textContent()).toContain(agentId);
    await shot(page, "05-invocation-detail");

    // The same screens at phone width: readable, no page-wide horizontal scrolling.
    await page.setViewportSize(PHONE);
    await shot(page, "06-invocation-detail-phone");
    expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);
    await page.getByRole("link", { name: "Invocations", exact: true }).first().click();
    await expect.poll(() => row.count()).toBe(1);
    await shot(page, "07-invocations-phone");
    expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);

    expect(errors).toEqual([]);
    await page.close();
  });

  it("the overview shows the last hour's calls, error rate, p95 and the agents failing most, from real calls", async () => {
    // A tenant of its own, so the numbers on the page are exactly this test's calls.
    const op = await caller(gw, ["invocations:read_body"]);
    const broken = await pool.up((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("upstream broke");
    });
    const steady = (await op("POST", "/v1/agents", { name: "steady", upstream_url: upstream.url })).json.id;
    const flaky = (await op("POST", "/v1/agents", { name: "flaky", upstream_url: broken.url })).json.id;
    const { page, errors } = await newPage();
    // Before any call: zeros, and no failing agents, rather than an error or a blank.
    await signIn(page, op);
    await expect.poll(() => page.getByTestId("tile-calls").textContent()).toContain("0");
    expect(await page.getByTestId("tile-approvals").textContent()).toContain("0");
    await expect
      .poll(() => page.locator("main").textContent())
      .toContain("No failed calls in the last hour.");

    for (const [agent, n] of [
      [steady, 3],
      [flaky, 2],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const sent = await op("POST", `/v1/proxy/${agent}`, `call ${i}`);
        expect(sent.status).toBe(202);
        await pollDone(op, agent, sent.json.invocation_id);
      }
    }
    // What the API says the hour holds: the page must show the same numbers.
    const since = new Date(Date.now() - 3600_000).toISOString();
    const hour = (await op("GET", `/v1/analytics/summary?since=${since}`, undefined)).json as {
      invocations: number;
      latency_ms_p95: number;
    };
    expect(hour.invocations).toBe(5);

    await page.getByRole("button", { name: "Refresh" }).click();
    await expect.poll(() => page.getByTestId("tile-calls").textContent()).toContain("5");
    expect(await page.getByTestId("tile-errors").textContent()).toContain("40 %");
    expect(await page.getByTestId("tile-errors").textContent()).toContain("2 failed");
    expect(await page.getByTestId("tile-p95").textContent()).toContain(
      `${Math.round(hour.latency_ms_p95 * 10) / 10} ms`,
    );
    const failing = page.getByTestId("failing-agents").locator("tbody tr");
    await expect.poll(() => failing.count()).toBe(1);
    expect(await failing.first().locator("td").allTextContents()).toEqual([
      "flaky",
      "2",
      "2",
      "100 %",
      expect.stringMatching(/ ms$/),
    ]);
    const latest = page.getByTestId("latest-failures").locator("tbody tr");
    await expect.poll(() => latest.count()).toBe(2);
    expect((await latest.first().textContent()) ?? "").toContain("upstream_5xx");
    await shot(page, "13-overview-last-hour");
    // The failing agent links to its failed invocations.
    await failing.first().getByRole("link", { name: "flaky" }).click();
    await page.waitForURL(/#\/invocations\?/);
    expect(page.url()).toContain(`agent_id=${flaky}`);
    expect(page.url()).toContain("status=failed");
    await page.setViewportSize(PHONE);
    await page.goto(`${gw.url}/console#/`);
    await expect.poll(() => page.getByTestId("tile-calls").textContent()).toContain("5");
    await shot(page, "14-overview-phone");
    expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("edits, suspends and deletes an agent, and manages credentials without ever showing a secret", async () => {
    const { page, errors } = await newPage();
    await signIn(page);
    const secret = `s3cret-${Date.now()}-do-not-show`;
    await page.getByRole("link", { name: "Credentials" }).click();
    const form = page.getByRole("form", { name: "New credential" });
    await form.getByLabel("Name").fill("upstream-key");
    await form.getByLabel("Secret").fill(secret);
    await form.getByRole("button", { name: "Store credential" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("upstream-key");
    const creds = await call("GET", "/v1/credentials");
    const credId = creds.json.data[0].id as string;
    expect(await page.content()).not.toContain(secret);
    await page.getByRole("button", { name: "Rotate" }).click();
    await page.getByLabel("New secret").fill(`${secret}-2`);
    await page
      .getByRole("form", { name: "Rotate credential" })
      .getByRole("button", { name: "Rotate" })
      .click();
    await expect.poll(async () => (await call("GET", `/v1/credentials/${credId}`)).json.version).toBe(2);
    expect(await page.content()).not.toContain(secret);
    await shot(page, "08-credentials");

    // An agent that references it, then edited: rate limit, price, suspend, delete.
    const a = await call("POST", "/v1/agents", {
      name: "to-edit",
      upstream_url: upstream.url,
      credential_ref: credId,
    });
    await page.goto(`${gw.url}/console#/agents/${a.json.id}`);
    await page.getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Requests per second").fill("5");
    await page.getByLabel("Burst").fill("7");
    await page.getByLabel("Priced: callers pay per call in USDC").check();
    await page.getByLabel("Amount (smallest unit)").fill("1000");
    await page.getByLabel("Pay to").fill(`0x${"ab".repeat(20)}`);
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => page.locator("main").textContent()).toContain("5 per second, burst 7");
    const edited = await call("GET", `/v1/agents/${a.json.id}`);
    expect(edited.json).toMatchObject({
      rate_limit: { rps: 5, burst: 7 },
      price: { amount: "1000", asset: "USDC", network: "base" },
      credential_ref: credId,
    });
    await page.getByRole("button", { name: "Suspend" }).click();
    await expect.poll(async () => (await call("GET", `/v1/agents/${a.json.id}`)).json.suspended).toBe(true);
    await page.getByRole("button", { name: "Resume" }).waitFor();

    // Deleting the credential the agent uses is refused: the API's 409 message is shown.
    await page.getByRole("link", { name: "Credentials" }).click();
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("button", { name: "Confirm delete" }).click();
    const conflict = await call("DELETE", `/v1/credentials/${credId}`);
    expect(conflict.status).toBe(409);
    await expect.poll(() => page.getByRole("alert").textContent()).toBe(conflict.json.error);
    errors.length = 0; // the browser logs the 409 it was asked to provoke

    await page.goto(`${gw.url}/console#/agents/${a.json.id}`);
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("button", { name: "Confirm delete" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Deleted “to-edit”");
    // Soft delete: gone from the catalog, its history kept.
    expect((await call("GET", `/v1/agents/${a.json.id}`)).status).toBe(404);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("stores an OAuth client credential from the form and shows its settings, never the client secret", async () => {
    const { page, errors } = await newPage();
    await signIn(page);
    const secret = `oauth-client-${Date.now()}-do-not-show`;
    await page.getByRole("link", { name: "Credentials" }).click();
    const form = page.getByRole("form", { name: "New credential" });
    await form.getByLabel("Name").fill("oauth-upstream");
    await form.getByLabel("Kind").selectOption("oauth2_client_credentials");
    await form.getByLabel("Token URL").fill("https://auth.example.com/oauth/token");
    await form.getByLabel("Client ID").fill("gateway-client");
    await form.getByLabel("Scope (optional)").fill("tools:read");
    await form.getByLabel("Client authentication").selectOption("client_secret_post");
    await form.getByLabel("Client secret").fill(secret);
    await form.getByRole("button", { name: "Store credential" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("oauth-upstream");
    const listed = (await call("GET", "/v1/credentials")).json.data as Array<Record<string, unknown>>;
    expect(listed.find((c) => c.name === "oauth-upstream")).toMatchObject({
      kind: "oauth2_client_credentials",
      token_url: "https://auth.example.com/oauth/token",
      client_id: "gateway-client",
      scope: "tools:read",
      auth_method: "client_secret_post",
    });
    await expect
      .poll(() => page.locator("main").textContent())
      .toContain("https://auth.example.com/oauth/token");
    expect(await page.content()).not.toContain(secret);
    await shot(page, "08b-credentials-oauth");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("stores an OAuth token exchange credential from the form; the client secret is in no response and nowhere in the page", async () => {
    const who = await caller(gw);
    const { page, errors } = await newPage();
    // Every answer the page receives, headers and body, to search for the secret.
    const answers: Array<Promise<string>> = [];
    page.on("response", (r) => {
      answers.push(
        r
          .text()
          .catch(() => "")
          .then((body) => `${r.url()}\n${JSON.stringify(r.headers())}\n${body}`),
      );
    });
    await signIn(page, who);
    const secret = `exchange-client-${Date.now()}-do-not-show`;
    await page.getByRole("link", { name: "Credentials" }).click();
    const form = page.getByRole("form", { name: "New credential" });
    await form.getByLabel("Name").fill("exchange-upstream");
    await form.getByLabel("Kind").selectOption("oauth2_token_exchange");
    await form.getByLabel("Token URL").fill("https://auth.example.com/oauth/exchange");
    await form.getByLabel("Client ID").fill("gateway-exchanger");
    await form.getByLabel("Audience (optional)").fill("https://mcp.example.com");
    await form.getByLabel("Client secret").fill(secret);
    // The field values the search below reads: the typed secret is there until the form is sent.
    const fieldValues = async () =>
      (await page.evaluate(
        "[...document.querySelectorAll('input, textarea')].map((i) => i.value).join('\\n')",
      )) as string;
    expect(await fieldValues()).toContain(secret);
    await form.getByRole("button", { name: "Store credential" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("exchange-upstream");
    const listed = (await who("GET", "/v1/credentials")).json.data as Array<Record<string, unknown>>;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      name: "exchange-upstream",
      kind: "oauth2_token_exchange",
      token_url: "https://auth.example.com/oauth/exchange",
      client_id: "gateway-exchanger",
      audience: "https://mcp.example.com",
      scope: null,
      auth_method: "client_secret_basic",
      hint: secret.slice(-4),
    });
    const row = page.locator("main table tbody tr", { hasText: "exchange-upstream" });
    await expect.poll(() => row.textContent()).toContain("oauth2_token_exchange");
    expect(await row.textContent()).toContain("https://auth.example.com/oauth/exchange");

    // The markup, and what the form fields hold (a password field's value is not in the markup).
    const seen = [await page.content(), await fieldValues(), ...(await Promise.all(answers))].join("\n");
    expect(seen).toContain("gateway-exchanger"); // the search reads what the API answered
    expect(seen).not.toContain(secret);
    await shot(page, "08c-credentials-token-exchange");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows an MCP agent's tools, the diff of a drifted tool, pins it again, and counts drift on the overview", async () => {
    const tools = [
      { name: "search", description: "Searches the web", inputSchema: { type: "object" } },
      { name: "fetch", description: "Fetches a page", inputSchema: { type: "object" } },
    ];
    const server = await startToolsUpstream({ tools });
    try {
      const who = await caller(gw);
      const created = await who("POST", "/v1/agents", {
        name: "console-mcp",
        upstream_url: server.url,
        protocol: "mcp",
        mcp_transport: "streamable_http",
      });
      const agentId = created.json.id as string;
      expect((await who("POST", `/v1/agents/${agentId}/tools/refresh`)).status).toBe(200);
      expect((await who("POST", `/v1/agents/${agentId}/tools/pin`)).status).toBe(200);
      server.tools[0] = {
        ...tools[0],
        description: "Searches the web and mails your files away",
      } as (typeof tools)[0];
      expect((await who("POST", `/v1/agents/${agentId}/tools/refresh`)).status).toBe(200);

      const { page, errors } = await newPage();
      await signIn(page, who);
      await expect
        .poll(() => page.getByTestId("drifted-count").textContent())
        .toContain("1 pinned tool differs");
      await expect.poll(() => page.getByTestId("drifted-tools").textContent()).toContain("search");
      await shot(page, "30-overview-drifted");
      await page.getByTestId("drifted-tools").getByRole("link", { name: "console-mcp" }).click();
      const row = (name: string) => page.locator(`[data-tool="${name}"]`);
      await expect.poll(() => row("search").textContent()).toContain("drifted");
      await expect.poll(() => row("fetch").textContent()).toContain("pinned");
      await row("search").getByRole("button", { name: "Diff" }).click();
      await expect.poll(() => page.getByTestId("diff-pinned").textContent()).toContain('"Searches the web"');
      expect(await page.getByTestId("diff-current").textContent()).toContain("mails your files away");
      expect(await page.locator("[data-testid=diff-current] .added").count()).toBeGreaterThan(0);
      await shot(page, "31-tool-diff");
      await row("search").getByRole("button", { name: "Approve and pin" }).click();
      await expect.poll(() => row("search").textContent()).toContain("pinned");
      await row("fetch").getByRole("button", { name: "Unpin" }).click();
      await expect.poll(() => row("fetch").textContent()).toContain("unpinned");
      const stored = await who("GET", `/v1/agents/${agentId}/tools`);
      expect(stored.json.data.map((t: { name: string; status: string }) => [t.name, t.status])).toEqual([
        ["fetch", "unpinned"],
        ["search", "pinned"],
      ]);
      expect(errors).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("says why a fresh MCP agent's first tools/call is refused under a tool_status rule, and refreshes its tools from the agent's page", async () => {
    const who = await caller(gw);
    const server = await startMcpV2Server({ name: "fresh" });
    const gone = await startMcpV2Server({ name: "gone" });
    await gone.close();
    try {
      const mcp = (name: string, url: string) =>
        who("POST", "/v1/agents", {
          name,
          protocol: "mcp",
          upstream_url: url,
          mcp_protocol_version: "2026-07-28",
        });
      const agentId = (await mcp("fresh-mcp", server.url)).json.id as string;
      const goneId = (await mcp("gone-mcp", gone.url)).json.id as string;
      const put = await who("PUT", "/v1/policy", {
        default: "allow",
        rules: [{ action: "deny", match: { methods: ["tools/call"], tool_status: ["drifted", "unknown"] } }],
      });
      expect(put.status).toBe(200);
      const echo = () =>
        who(
          "POST",
          `/v1/proxy/${agentId}/stream`,
          {
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: {
              name: "echo",
              arguments: { text: "hi" },
              _meta: {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": { name: "console-test", version: "1" },
                "io.modelcontextprotocol/clientCapabilities": {},
              },
            },
          },
          {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "echo",
          },
        );
      // The documented behaviour: a tool the gateway never saw is unknown, so the rule refuses it.
      expect((await echo()).status).toBe(403);

      const { page, errors } = await newPage();
      await signIn(page, who);
      await page.getByRole("link", { name: "Policy" }).click();
      const note = page.getByTestId("unknown-tools-note");
      await expect
        .poll(() => note.textContent())
        .toContain("Rule 1 matches tools the gateway has never seen");
      expect(await note.textContent()).toContain("Refresh tools");
      await shot(page, "32-policy-unknown-tools-note");

      await page.goto(`${gw.url}/console#/agents/${agentId}`);
      const tools = page.getByTestId("agent-tools");
      const never = page.getByTestId("tools-never-learned");
      await expect.poll(() => never.textContent()).toContain("never seen this agent's tools");
      await shot(page, "33-tools-never-learned");
      await never.getByRole("button", { name: "Refresh tools" }).click();
      await expect
        .poll(() => tools.getByRole("status").textContent())
        .toBe("Refreshed: the server lists 2 tools.");
      await expect.poll(() => page.locator('[data-tool="echo"]').textContent()).toContain("unpinned");
      expect(await never.count()).toBe(0);
      expect((await echo()).status).toBe(200);

      // A server that cannot be reached: the API's own error is shown, and the notice stays.
      await page.goto(`${gw.url}/console#/agents/${goneId}`);
      await page.getByTestId("tools-never-learned").getByRole("button", { name: "Refresh tools" }).click();
      const refused = await who("POST", `/v1/agents/${goneId}/tools/refresh`);
      expect(refused.status).toBe(502);
      await expect.poll(() => tools.getByRole("alert").textContent()).toBe(refused.json.error);
      expect(await page.getByTestId("tools-never-learned").count()).toBe(1);
      errors.length = 0; // the browser logs the 502 that was asked for
      await page.close();
    } finally {
      await server.close();
    }
  });

  it("creates and edits a virtual MCP server by picking members; the invocation detail names the member that served it", async () => {
    const who = await caller(gw);
    const alpha = await startMcpV2Server({ name: "alpha" });
    const beta = await startMcpV2Server({ name: "beta" });
    try {
      const a = await who("POST", "/v1/agents", {
        name: "alpha-mcp",
        protocol: "mcp",
        upstream_url: alpha.url,
      });
      const b = await who("POST", "/v1/agents", {
        name: "beta-mcp",
        protocol: "mcp",
        upstream_url: beta.url,
      });
      const { page, errors } = await newPage();
      await signIn(page, who);
      await page.getByRole("link", { name: "Agents" }).click();
      await page.getByRole("link", { name: "New agent" }).click();
      await page.getByLabel("Name").fill("portal");
      await page.getByLabel("Protocol").selectOption("mcp");
      await page.getByLabel("Virtual MCP server").check();
      await page.getByLabel("Member alpha-mcp").check();
      await page.getByLabel("Prefix of alpha-mcp").fill("al");
      await page.getByLabel("Member beta-mcp").check();
      await page.getByLabel("Prefix of beta-mcp").fill("be");
      await page.getByLabel("Exclude of beta-mcp").fill("add");
      await page.getByRole("button", { name: "Create agent" }).click();
      await page.waitForURL(/#\/agents\/agt_/);
      const id = /#\/agents\/(agt_[\w-]+)/.exec(page.url())?.[1] ?? "";
      expect((await who("GET", `/v1/agents/${id}`)).json).toMatchObject({
        upstream_url: null,
        members: [
          { agent_id: a.json.id, prefix: "al" },
          { agent_id: b.json.id, prefix: "be", exclude: ["add"] },
        ],
      });
      await expect.poll(() => page.locator("main").textContent()).toContain("be__");
      await shot(page, "13-virtual-agent");

      // Edit: drop a member.
      await page.getByRole("button", { name: "Edit" }).click();
      await page.getByLabel("Member alpha-mcp").uncheck();
      await page.getByRole("button", { name: "Save changes" }).click();
      await expect
        .poll(async () => (await who("GET", `/v1/agents/${id}`)).json.members)
        .toEqual([{ agent_id: b.json.id, prefix: "be", exclude: ["add"] }]);

      // A routed call; its detail names the member that served it.
      const sent = await who(
        "POST",
        `/v1/proxy/${id}`,
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "be__echo",
            arguments: { text: "hi" },
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "console-test", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        },
        {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "be__echo",
        },
      );
      expect(sent.status).toBe(202);
      const done = await pollDone(who, id, sent.json.invocation_id);
      expect(done.json, JSON.stringify(done.json)).toMatchObject({
        status: "succeeded",
        routed_agent_id: b.json.id,
      });
      await page.goto(`${gw.url}/console#/invocations/${sent.json.invocation_id}`);
      await expect.poll(() => page.locator("main").textContent()).toContain("Served by member");
      const [agentRef, memberRef] = [0, 1].map((i) => page.getByTestId("agent-ref").nth(i));
      await expect.poll(() => memberRef?.getByRole("link").textContent()).toBe("beta-mcp");
      expect(await memberRef?.textContent()).toContain(b.json.id);
      expect(await agentRef?.getByRole("link").textContent()).toBe("portal");
      await shot(page, "14-virtual-invocation");
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await alpha.close();
      await beta.close();
    }
  });

  it("sets tool search on a virtual MCP server from the form, and tries a search in its tool catalog", async () => {
    const who = await caller(gw);
    const dev = await startMcpV2Server({ name: "dev", tools: [], prompts: [], definitions: TOOL_CORPUS.dev });
    try {
      const a = await who("POST", "/v1/agents", { name: "dev-mcp", protocol: "mcp", upstream_url: dev.url });
      const { page, errors } = await newPage();
      await signIn(page, who);
      await page.getByRole("link", { name: "Agents" }).click();
      await page.getByRole("link", { name: "New agent" }).click();
      await page.getByLabel("Name").fill("searchable");
      await page.getByLabel("Protocol").selectOption("mcp");
      await page.getByLabel("Virtual MCP server").check();
      await page.getByLabel("Member dev-mcp").check();
      await page.getByLabel("Prefix of dev-mcp").fill("dev");
      await page.getByLabel("Tool search").check();
      await page.getByRole("button", { name: "Create agent" }).click();
      await page.waitForURL(/#\/agents\/agt_/);
      const id = /#\/agents\/(agt_[\w-]+)/.exec(page.url())?.[1] ?? "";
      expect((await who("GET", `/v1/agents/${id}`)).json).toMatchObject({
        tool_discovery: "search",
        members: [{ agent_id: a.json.id, prefix: "dev" }],
      });
      // An agent's first search lists the members on the gateway's behalf: the catalog fills.
      const searched = await who(
        "POST",
        `/v1/proxy/${id}`,
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "search_tools",
            arguments: { query: "merge a pull request" },
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "console-test", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        },
        {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "search_tools",
        },
      );
      expect(searched.status).toBe(202);
      expect((await pollDone(who, id, searched.json.invocation_id)).json.status).toBe("succeeded");
      await page.reload();
      const box = page.getByTestId("tool-search");
      await box.getByRole("textbox").fill("merge my approved pull request into main");
      await box.getByRole("button", { name: "Search" }).click();
      await expect
        .poll(() => box.locator("[data-found]").first().getAttribute("data-found"))
        .toBe("dev__merge_pull_request");
      expect(await box.locator("[data-found]").count()).toBeLessThanOrEqual(10);
      expect(await page.locator("main").textContent()).toContain(
        "search (tools/list answers search_tools and call_tool)",
      );
      await shot(page, "15-tool-search");
      // Editing keeps the mode unless it is unchecked.
      await page.getByRole("button", { name: "Edit" }).click();
      expect(await page.getByLabel("Tool search").isChecked()).toBe(true);
      await page.getByLabel("Tool search").uncheck();
      await page.getByRole("button", { name: "Save changes" }).click();
      await expect.poll(async () => (await who("GET", `/v1/agents/${id}`)).json.tool_discovery).toBe("list");
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await dev.close();
    }
  });

  it("shows an A2A call's task: its method, task, context and state, and the other invocations of that task", async () => {
    const a2a = await startA2aUpstream();
    try {
      const agent = await call("POST", "/v1/agents", {
        name: "a2a-echo",
        protocol: "a2a",
        upstream_url: a2a.url,
      });
      expect(agent.status).toBe(201);
      const send = async (text: string, taskId?: string) => {
        const sent = await call(
          "POST",
          `/v1/proxy/${agent.json.id}`,
          {
            jsonrpc: "2.0",
            id: text,
            method: "message/send",
            params: {
              message: {
                kind: "message",
                messageId: `m-${text}`,
                role: "user",
                parts: [{ kind: "text", text }],
                ...(taskId ? { taskId } : {}),
              },
            },
          },
          { "content-type": "application/json" },
        );
        expect(sent.status).toBe(202);
        const done = await pollDone(call, agent.json.id, sent.json.invocation_id);
        expect(done.json, JSON.stringify(done.json)).toMatchObject({
          status: "succeeded",
          a2a_method: "message/send",
        });
        return done.json as {
          id: string;
          a2a_task_id: string;
          a2a_context_id: string;
          a2a_task_state: string;
        };
      };
      // Two turns of one task: the first asks for input, the second completes it.
      const first = await send("input");
      expect(first.a2a_task_state).toBe("input-required");
      const second = await send("done", first.a2a_task_id);
      expect(second).toMatchObject({ a2a_task_id: first.a2a_task_id, a2a_task_state: "completed" });

      const { page, errors } = await newPage();
      await signIn(page);
      await page.goto(`${gw.url}/console#/invocations/${second.id}`);
      const task = page.getByTestId("a2a-task");
      await expect.poll(() => task.textContent()).toContain(first.a2a_task_id);
      const text = (await task.textContent()) ?? "";
      expect(text).toContain("message/send");
      expect(text).toContain(first.a2a_context_id);
      expect(text).toContain("completed");
      const rows = task.getByTestId("task-invocations").locator("tbody tr");
      await expect.poll(() => rows.count()).toBe(2);
      expect(await rows.nth(0).getAttribute("data-id")).toBe(first.id);
      expect(await rows.nth(0).textContent()).toContain("input-required");
      expect(await rows.nth(1).getAttribute("aria-current")).toBe("true");
      await shot(page, "15-a2a-task");

      // The task's other invocation opens from its row.
      await rows.nth(0).getByRole("link").click();
      await page.waitForURL(new RegExp(`#/invocations/${first.id}`));
      await expect.poll(() => page.getByTestId("a2a-task").textContent()).toContain("input-required");
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await a2a.close();
    }
  });

  it("shows an MCP call's task and its status, and the other invocations of that task", async () => {
    const member = await startMcpV1Server({ name: "tasker", mode: "stateless", tasks: true });
    try {
      const agent = await call("POST", "/v1/agents", {
        name: "mcp-tasks",
        protocol: "mcp",
        upstream_url: member.url,
      });
      expect(agent.status).toBe(201);
      const send = async (method: string, params: Record<string, unknown>) => {
        const sent = await call(
          "POST",
          `/v1/proxy/${agent.json.id}`,
          { jsonrpc: "2.0", id: method, method, params },
          { "content-type": "application/json", accept: "application/json, text/event-stream" },
        );
        expect(sent.status).toBe(202);
        await pollDone(call, agent.json.id, sent.json.invocation_id);
        const done = await recordDone(call, sent.json.invocation_id);
        return done.json as { id: string; mcp_task_id: string; mcp_task_status: string };
      };
      const created = await send("tools/call", {
        name: "work",
        arguments: { text: "c" },
        task: { ttl: 60_000 },
      });
      expect(created.mcp_task_id).toBeTruthy();
      const got = await send("tasks/get", { taskId: created.mcp_task_id });
      expect(got).toMatchObject({ mcp_task_id: created.mcp_task_id, mcp_task_status: "completed" });

      const { page, errors } = await newPage();
      await signIn(page);
      await page.goto(`${gw.url}/console#/invocations/${got.id}`);
      const section = page.getByTestId("mcp-call");
      await expect.poll(() => section.textContent()).toContain(created.mcp_task_id);
      const text = (await section.textContent()) ?? "";
      expect(text).toContain("MCP task status");
      expect(text).toContain("completed");
      const rows = section.getByTestId("task-invocations").locator("tbody tr");
      await expect.poll(() => rows.count()).toBe(2);
      expect(await rows.nth(0).getAttribute("data-id")).toBe(created.id);
      expect(await rows.nth(0).textContent()).toContain("tools/call");
      expect(await rows.nth(1).getAttribute("aria-current")).toBe("true");
      await shot(page, "15b-mcp-task");
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await member.close();
    }
  });

  it("shows what each invocation called (MCP method and tool, A2A method) and filters the list by it", async () => {
    const who = await caller(gw);
    const mcpUp = await pool.up((_req, res, body) => {
      const rpc = JSON.parse(body.toString() || "{}") as { id?: unknown; method?: string };
      const result =
        rpc.method === "tools/list" ? { tools: [] } : { content: [{ type: "text", text: "ok" }] };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: rpc.id ?? null, result }));
    });
    const a2aUp = await startA2aUpstream();
    try {
      const mcp = (
        await who("POST", "/v1/agents", { name: "toolbox", protocol: "mcp", upstream_url: mcpUp.url })
      ).json.id as string;
      const a2a = (
        await who("POST", "/v1/agents", { name: "helper", protocol: "a2a", upstream_url: a2aUp.url })
      ).json.id as string;
      const streamed = async (agent: string, rpc: Record<string, unknown>) => {
        const res = await who(
          "POST",
          `/v1/proxy/${agent}/stream`,
          { jsonrpc: "2.0", id: 1, ...rpc },
          { "content-type": "application/json", accept: "application/json, text/event-stream" },
        );
        expect(res.status, res.text).toBe(200);
        const id = res.headers.get("x-gateway-invocation-id") as string;
        await recordDone(who, id);
        return id;
      };
      const toolCall = (name: string) => ({ method: "tools/call", params: { name, arguments: {} } });
      const ids = {
        list: await streamed(mcp, { method: "tools/list" }),
        search: await streamed(mcp, toolCall("search")),
        fetch: await streamed(mcp, toolCall("fetch")),
        search2: await streamed(mcp, toolCall("search")),
        send: await streamed(a2a, {
          method: "message/send",
          params: {
            message: {
              kind: "message",
              messageId: "m-1",
              role: "user",
              parts: [{ kind: "text", text: "done" }],
            },
          },
        }),
      };

      const { page, errors } = await newPage();
      await signIn(page, who);
      await page.getByRole("link", { name: "Invocations", exact: true }).first().click();
      const rows = page.locator("[data-testid=invocations] tbody tr");
      await expect.poll(() => rows.count()).toBe(5);
      const called = (id: string) => page.locator(`tr[data-id="${id}"] [data-testid=call]`).textContent();
      expect(await called(ids.list)).toBe("tools/list");
      expect(await called(ids.search)).toBe("tools/call search");
      expect(await called(ids.fetch)).toBe("tools/call fetch");
      expect(await called(ids.send)).toBe("message/send");
      await shot(page, "17-invocations-called");

      // A row's call opens the list of the calls alike, and the form shows that filter.
      await page.locator(`tr[data-id="${ids.search}"] [data-testid=call]`).getByRole("link").click();
      await page.waitForURL(/method=tools%2Fcall&tool=search/);
      await expect.poll(() => rows.count()).toBe(2);
      expect((await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-id")))).sort()).toEqual(
        [ids.search, ids.search2].sort(),
      );
      expect(await page.getByLabel("Method", { exact: true }).inputValue()).toBe("tools/call");
      expect(await page.getByLabel("Tool", { exact: true }).inputValue()).toBe("search");

      // Typed into the form: the A2A method, whatever the protocol; then an unknown tool.
      await page.getByLabel("Method", { exact: true }).fill("message/send");
      await page.getByLabel("Tool", { exact: true }).fill("");
      await page.getByRole("button", { name: "Apply" }).click();
      await expect.poll(() => rows.count()).toBe(1);
      expect(await rows.first().getAttribute("data-id")).toBe(ids.send);
      await page.getByLabel("Method", { exact: true }).fill("");
      await page.getByLabel("Tool", { exact: true }).fill("nothing-of-the-kind");
      await page.getByRole("button", { name: "Apply" }).click();
      await expect.poll(() => page.locator("main").textContent()).toContain("No invocations match.");
      await page.getByRole("link", { name: "Clear" }).click();
      await expect.poll(() => rows.count()).toBe(5);
      expect(await page.getByLabel("Tool", { exact: true }).inputValue()).toBe("");

      // At phone width the call reads under the agent's name; status and latency stay in view.
      await page.setViewportSize(PHONE);
      const search = page.locator(`tr[data-id="${ids.search}"]`);
      await search.getByTestId("call-phone").waitFor();
      await shot(page, "17b-invocations-called-phone");
      expect(await search.getByTestId("call-phone").textContent()).toBe("tools/call search");
      expect(await search.getByTestId("call").isVisible()).toBe(false);
      const latency = await search.locator("td.num").boundingBox();
      expect((latency?.x ?? Infinity) + (latency?.width ?? 0)).toBeLessThanOrEqual(PHONE.width);
      expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await a2aUp.close();
    }
  });

  it("shows 'not enabled on this deployment' for a surface the deployment does not mount", async () => {
    // Every optional family is mounted by default; the credential vault can be switched off.
    const off = await startGateway({ GW_CREDENTIALS: "off" });
    try {
      const caps = await client(off.url, call.token)("GET", "/v1/capabilities");
      expect(caps.json.surfaces.credentials).toBe(false);
      const { page, errors } = await newPage();
      await page.goto(`${off.url}/console`);
      await page.getByLabel("Access token").fill(call.token);
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect.poll(() => page.getByTestId("identity").textContent()).toContain(call.tenant);
      await page.goto(`${off.url}/console#/credentials`);
      await expect
        .poll(() => page.locator("main").textContent())
        .toContain("Credentials is not enabled on this deployment.");
      // A mounted family on the same deployment still works.
      await page.goto(`${off.url}/console#/policy`);
      await expect.poll(() => page.locator("main").textContent()).not.toContain("not enabled");
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await off.close();
    }
  });

  it("edits the policy: the API's validation error inline, then a valid document, then its decisions", async (ctx) => {
    if (!(await surfaces()).policy) {
      console.warn("policy step skipped: /v1/capabilities reports surfaces.policy false on this build");
      return ctx.skip();
    }
    const { page, errors } = await newPage();
    await signIn(page);
    const agentId = (await call("POST", "/v1/agents", { name: "policed", upstream_url: upstream.url })).json
      .id;
    await page.getByRole("link", { name: "Policy" }).click();
    const editor = page.getByLabel("Policy JSON");
    await expect.poll(() => editor.inputValue()).toContain("rules");

    const bad = { default: "sometimes", on_error: "deny", rules: [] };
    const refused = await call("PUT", "/v1/policy", bad);
    expect(refused.status).toBe(400);
    await editor.fill(JSON.stringify(bad));
    await page.getByRole("button", { name: "Save policy" }).click();
    await expect.poll(() => page.locator("#policy-error").textContent()).toBe(refused.json.error);
    expect(await editor.getAttribute("aria-invalid")).toBe("true");
    await shot(page, "09-policy-error");
    errors.length = 0; // the 400 was the point

    const good = {
      default: "allow",
      on_error: "deny",
      rules: [{ action: "warn", match: { agents: [agentId] } }],
    };
    await editor.fill(JSON.stringify(good, null, 2));
    await page.getByRole("button", { name: "Save policy" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Saved: version");
    const doc = await call("GET", "/v1/policy");
    expect(doc.json.rules).toEqual(good.rules);

    const sent = await call("POST", `/v1/proxy/${agentId}`, "x");
    expect(sent.status).toBe(202);
    await pollDone(call, agentId, sent.json.invocation_id);
    await page.reload();
    await expect.poll(() => page.locator("main table").last().textContent()).toContain("warn");
    await shot(page, "10-policy-decisions");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("writes an answer rule in the policy editor; a redacted tool result shows its findings, never the text", async () => {
    const who = await caller(gw, ["invocations:read_body"]);
    const mcp = await pool.up((_req, res, body) => {
      const id = (JSON.parse(body.toString() || "{}") as { id?: unknown }).id ?? null;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id,
          result: { content: [{ type: "text", text: "write to bob@example.com" }] },
        }),
      );
    });
    const agentId = (
      await who("POST", "/v1/agents", { name: "mailer", protocol: "mcp", upstream_url: mcp.url })
    ).json.id;
    const { page, errors } = await newPage();
    await signIn(page, who);
    await page.getByRole("link", { name: "Policy" }).click();
    const editor = page.getByLabel("Policy JSON");
    await expect.poll(() => editor.inputValue()).toContain("rules");
    const doc = {
      default: "allow",
      on_error: "deny",
      rules: [],
      answer_rules: [{ detect: { pii: ["email"] }, action: "redact" }],
    };
    await editor.fill(JSON.stringify(doc, null, 2));
    await page.getByRole("button", { name: "Save policy" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Saved: version");
    expect((await who("GET", "/v1/policy")).json.answer_rules).toMatchObject(doc.answer_rules);

    const res = await who(
      "POST",
      `/v1/proxy/${agentId}/stream`,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "send", arguments: {} } },
      { accept: "application/json, text/event-stream" },
    );
    expect(res.status).toBe(200);
    expect(res.text).toContain("write to [redacted:email]");
    expect(res.text).not.toContain("bob@example.com");
    const invocationId = res.headers.get("x-gateway-invocation-id") as string;
    await expect
      .poll(async () => (await who("GET", `/v1/invocations/${invocationId}`)).json.answer_action)
      .toBe("redacted");

    await page.goto(`${gw.url}/console#/invocations/${invocationId}`);
    await expect.poll(() => page.locator("main").textContent()).toContain("redacted (email ×1)");
    expect(await page.content()).not.toContain("bob@example.com");
    await shot(page, "16-answer-findings");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows each limit rule's current use, and a key's use looked up by value", async () => {
    const op = await caller(gw);
    const agentId = (await op("POST", "/v1/agents", { name: "metered", upstream_url: upstream.url })).json
      .id as string;
    const put = await op("PUT", "/v1/policy", {
      rules: [
        { action: "limit", limit: { requests: 5, per: "day" } },
        { action: "limit", limit: { requests: 100, per: "hour", key: '"tenant"' } },
      ],
    });
    expect(put.status).toBe(200);
    for (let i = 0; i < 2; i++) {
      expect(
        (await op("POST", `/v1/proxy/${agentId}/stream`, "x", { "content-type": "text/plain" })).status,
      ).toBe(200);
    }
    const { page, errors } = await newPage();
    await signIn(page, op);
    await page.getByRole("link", { name: "Policy" }).click();
    const table = page.getByTestId("quotas");
    await expect.poll(() => table.locator('tr[data-rule="1"]').textContent()).toContain("2 / 5");
    expect(await table.locator('tr[data-rule="1"]').textContent()).toContain("user-1");
    expect(await table.locator('tr[data-rule="2"]').textContent()).toContain("2 / 100");
    await shot(page, "13-policy-quotas");
    await page.getByRole("form", { name: "Quota lookup" }).getByLabel("Key").fill("someone-else");
    await page.getByRole("button", { name: "Show" }).click();
    await expect.poll(() => table.locator('tr[data-rule="1"]').textContent()).toContain("0 / 5");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("draws a spent quota as spent and a nearly spent one as a warning, in colour and in words", async () => {
    const op = await caller(gw);
    const agentId = (await op("POST", "/v1/agents", { name: "metered", upstream_url: upstream.url })).json
      .id as string;
    // Four calls against three rules: 4 of 4 (spent), 4 of 5 (80 %: near), 4 of 100.
    const put = await op("PUT", "/v1/policy", {
      rules: [
        { action: "limit", limit: { requests: 4, per: "day" } },
        { action: "limit", limit: { requests: 5, per: "day", key: '"tenant"' } },
        { action: "limit", limit: { requests: 100, per: "day", key: '"all"' } },
      ],
    });
    expect(put.status).toBe(200);
    for (let i = 0; i < 4; i++) {
      const res = await op("POST", `/v1/proxy/${agentId}/stream`, "x", { "content-type": "text/plain" });
      expect(res.status).toBe(200);
    }
    const { page, errors } = await newPage();
    await signIn(page, op);
    await page.getByRole("link", { name: "Policy" }).click();
    const row = (rule: number) => page.getByTestId("quotas").locator(`tr[data-rule="${rule}"]`);
    await expect.poll(() => row(1).textContent()).toContain("4 / 4");
    expect(await row(1).textContent()).toContain("spent");
    expect(await row(2).textContent()).toContain("4 / 5");
    expect(await row(2).textContent()).toContain("near the limit");
    expect(await row(3).textContent()).toContain("4 / 100");
    expect(await row(3).textContent()).not.toMatch(/spent|near/);
    // What the operator sees: the gauge's fill as the browser drew it.
    expect(await gaugeColour(row(1).locator("meter"))).toBe("red");
    expect(await gaugeColour(row(2).locator("meter"))).toBe("amber");
    expect(await gaugeColour(row(3).locator("meter"))).toBe("green");
    await shot(page, "13b-policy-quotas-spent");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("the policy editor says A2A answers are judged too, and grows with the document up to most of the window", async () => {
    const op = await caller(gw);
    // About twenty lines once pretty-printed: more than the editor's old fixed fourteen.
    const rules = ["alpha", "gamma"].map((tool) => ({ action: "warn", match: { tools: [tool] } }));
    expect((await op("PUT", "/v1/policy", { default: "allow", on_error: "deny", rules })).status).toBe(200);
    const { page, errors } = await newPage();
    await signIn(page, op);
    await page.getByRole("link", { name: "Policy" }).click();
    const editor = page.getByLabel("Policy JSON");
    await expect.poll(() => editor.inputValue()).toContain("gamma");

    const help = (await page.getByRole("form", { name: "Policy document" }).textContent()) ?? "";
    expect(help).not.toContain("what an MCP server answers");
    expect(help).toContain("an MCP server's answers to tools/call, resources/read and prompts/get");
    expect(help).toContain(
      "an A2A agent's to SendMessage, SendStreamingMessage, GetTask and SubscribeToTask",
    );

    const box = async () =>
      (await page.evaluate(
        "(() => { const e = document.getElementById('policy-json'); return { scroll: e.scrollHeight, client: e.clientHeight }; })()",
      )) as { scroll: number; client: number };
    const lines = (await editor.inputValue()).split("\n").length;
    expect(lines).toBeGreaterThan(14);
    expect(lines).toBeLessThan(26);
    // The whole document shows: nothing to scroll inside the editor.
    expect((await box()).scroll).toBeLessThanOrEqual((await box()).client);
    await shot(page, "11b-policy-editor-grown");

    // A long document stops growing at 70 % of the window and scrolls inside.
    const long = {
      default: "allow",
      rules: Array.from({ length: 60 }, (_, i) => ({ action: "warn", match: { tools: [`t${i}`] } })),
    };
    await editor.fill(JSON.stringify(long, null, 2));
    await expect.poll(async () => (await box()).client).toBeGreaterThan(DESKTOP.height * 0.6);
    const capped = await box();
    expect(capped.client).toBeLessThanOrEqual(DESKTOP.height * 0.7);
    expect(capped.scroll).toBeGreaterThan(capped.client);
    // And shrinks back with the text.
    await editor.fill("{}");
    await expect.poll(async () => (await box()).client).toBeLessThan(DESKTOP.height * 0.3);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows a refused when condition at the rule and character the API named", async () => {
    const { page, errors } = await newPage();
    await signIn(page);
    await page.getByRole("link", { name: "Policy" }).click();
    const editor = page.getByLabel("Policy JSON");
    await expect.poll(() => editor.inputValue()).toContain("rules");
    const bad = {
      rules: [
        { action: "allow", when: "true" },
        { action: "deny", when: 'principal.sub == "a" &&' },
      ],
    };
    const refused = await call("PUT", "/v1/policy", bad);
    expect(refused.status).toBe(400);
    await editor.fill(JSON.stringify(bad));
    await page.getByRole("button", { name: "Save policy" }).click();
    await expect.poll(() => page.locator("#policy-error").textContent()).toBe(refused.json.error);
    const at = Number(/at character (\d+)$/.exec(refused.json.error)?.[1]);
    const where = page.getByTestId("when-error");
    await expect.poll(() => where.textContent()).toContain(`Rule 2, when, character ${at}`);
    // The marked character is the one the API named (1-based), in the expression of that rule.
    const marked = await where.locator("mark").textContent();
    expect(marked).toBe(bad.rules[1]?.when.slice(at - 1, at) || " ");
    await shot(page, "11-policy-when-error");
    errors.length = 0; // the 400 was the point
    await page.close();
  });

  it("lists a held call with its arguments and approves it with a reason; the call then passes once", async () => {
    const approver = await caller(gw, ["approvals:decide"], call.tenant);
    const agentId = (
      await call("POST", "/v1/agents", {
        name: "bank",
        upstream_url: upstream.url,
        protocol: "mcp",
        mcp_transport: "streamable_http",
      })
    ).json.id as string;
    await call("PUT", "/v1/policy", {
      rules: [
        { action: "require_approval", match: { agents: [agentId] }, when: "call.arguments.amount > 100" },
      ],
    });
    const transfer = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "transfer", arguments: { amount: 250, to: "acme" } },
    };
    const held = await call("POST", `/v1/proxy/${agentId}/stream`, transfer);
    expect(held.status).toBe(403);
    const id = held.json.approval_id as string;

    const { page, errors } = await newPage();
    await signIn(page, approver);
    // The overview counts the calls waiting for a person, as the API does, and links to them.
    const waiting = (await approver("GET", "/v1/approvals?status=pending")).json.total as number;
    expect(waiting).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId("tile-approvals").textContent()).toContain(String(waiting));
    await page.getByRole("link", { name: "Approvals" }).first().click();
    const row = page.locator(`tr[data-approval="${id}"]`);
    await expect.poll(() => row.textContent()).toContain('"amount": 250');
    expect(await row.textContent()).toContain("transfer");
    await shot(page, "12-approvals-pending");
    await row.getByLabel("Reason").fill("checked with finance");
    await row.getByRole("button", { name: "Approve" }).click();
    await expect
      .poll(async () => (await approver("GET", `/v1/approvals/${id}`)).json.status)
      .toBe("approved");
    expect((await approver("GET", `/v1/approvals/${id}`)).json.reason).toBe("checked with finance");
    // Gone from the pending list once decided.
    await expect.poll(() => row.count()).toBe(0);
    expect((await call("POST", `/v1/proxy/${agentId}/stream`, transfer)).status).toBe(200);
    expect((await call("POST", `/v1/proxy/${agentId}/stream`, transfer)).status).toBe(403);
    await call("PUT", "/v1/policy", { rules: [] });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("denies a held call with a reason: the approval reads denied with it, and the call stays refused", async () => {
    const op = await caller(gw);
    const approver = await caller(gw, ["approvals:decide"], op.tenant);
    const agentId = (
      await op("POST", "/v1/agents", {
        name: "bank",
        upstream_url: upstream.url,
        protocol: "mcp",
        mcp_transport: "streamable_http",
      })
    ).json.id as string;
    const policy = await op("PUT", "/v1/policy", {
      rules: [
        { action: "require_approval", match: { agents: [agentId] }, when: "call.arguments.amount > 100" },
      ],
    });
    expect(policy.status).toBe(200);
    const transfer = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "transfer", arguments: { amount: 9000, to: "mallory" } },
    };
    const held = await op("POST", `/v1/proxy/${agentId}/stream`, transfer);
    expect(held.status).toBe(403);
    const id = held.json.approval_id as string;
    const reached = upstream.received.length;

    const { page, errors } = await newPage();
    await signIn(page, approver);
    await page.getByRole("link", { name: "Approvals" }).first().click();
    const row = page.locator(`tr[data-approval="${id}"]`);
    await expect.poll(() => row.textContent()).toContain('"amount": 9000');
    await row.getByLabel("Reason").fill("not to mallory");
    await row.getByRole("button", { name: "Deny" }).click();
    await expect.poll(() => row.count()).toBe(0);
    expect((await approver("GET", `/v1/approvals/${id}`)).json).toMatchObject({
      status: "denied",
      reason: "not to mallory",
      decided_by: "user-1",
    });
    // The denied list shows who decided and why; no decision buttons any more.
    await page.getByLabel("Status").selectOption("denied");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => row.textContent()).toContain("user-1: not to mallory");
    expect(await row.getByRole("button", { name: "Approve" }).count()).toBe(0);
    await shot(page, "12b-approvals-denied");

    // The call stays refused: held again under a new approval, and the upstream never sees it.
    const again = await op("POST", `/v1/proxy/${agentId}/stream`, transfer);
    expect(again.status).toBe(403);
    expect(again.json.approval_id).toMatch(/^apr_/);
    expect(again.json.approval_id).not.toBe(id);
    expect(upstream.received.length).toBe(reached);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows one agent's agent events: sessions and tool calls from the events it recorded", async () => {
    const agentId = (await call("POST", "/v1/agents", { name: "eventful", upstream_url: upstream.url })).json
      .id;
    const session = `sha256:${"ab".repeat(32)}`;
    const event = async (fields: Record<string, unknown>) => {
      const res = await call("POST", "/v1/agent-events", {
        schema: "gw.agent-event.v1",
        event_id: crypto.randomUUID(),
        agent_id: agentId,
        session_ref: session,
        source: "hook",
        source_version: "1",
        occurred_at: new Date().toISOString(),
        ...fields,
      });
      expect(res.status, res.text).toBe(201);
    };
    await event({ type: "session.started" });
    await event({ type: "tool.completed", outcome: "succeeded", duration_ms: 120 });
    await event({ type: "tool.completed", outcome: "failed", duration_ms: 30 });
    const { page, errors } = await newPage();
    await signIn(page);
    await page.getByRole("link", { name: "Agent events" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Agent events");
    await page.goto(`${gw.url}/console#/agent-events?agent_id=${agentId}`);
    const text = () => page.locator("main").textContent();
    await expect.poll(text).toMatch(/Sessions\s*1/);
    await expect.poll(text).toMatch(/Tool calls\s*2/);
    await expect.poll(text).toMatch(/Tools failed or cancelled\s*1/);
    await shot(page, "13-agent-events");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("lists the audit log with filters and verifies its chain; without audit:read it says which scope is needed", async () => {
    const auditor = await caller(gw, ["audit:read"]);
    const agentId = (await auditor("POST", "/v1/agents", { name: "audited", upstream_url: upstream.url }))
      .json.id;
    expect((await auditor("PATCH", `/v1/agents/${agentId}`, { name: "audited-2" })).status).toBe(200);
    expect((await auditor("PUT", "/v1/policy", { default: "allow", rules: [] })).status).toBe(200);
    const { page, errors } = await newPage();
    await signIn(page, auditor);
    await page.getByRole("link", { name: "Audit" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Audit");
    const rows = () => page.locator("tr[data-audit]").count();
    await expect.poll(rows).toBe(3);
    await expect.poll(() => page.locator("main").textContent()).toContain("audited-2");
    await page.getByLabel("Action").selectOption("agent.update");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(rows).toBe(1);
    await page.getByRole("button", { name: "Verify chain" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toBe("Chain intact: 3 events");
    await shot(page, "14-audit");
    expect(errors).toEqual([]);
    await page.close();

    // The suite's own token has no audit:read: the screen names the scope instead of failing.
    const other = await newPage();
    await signIn(other.page);
    await other.page.goto(`${gw.url}/console#/audit`);
    await expect.poll(() => other.page.locator("main").textContent()).toContain("needs scope audit:read");
    expect(other.errors).toEqual([]);
    await other.page.close();
  });

  it("shows a replace or an update in the audit log as the paths that changed, a secret by name only", async () => {
    const auditor = await caller(gw, ["audit:read"]);
    const keep = { action: "warn", match: { tools: ["keep-me-as-i-am"] } };
    const v1 = {
      default: "allow",
      on_error: "deny",
      rules: [keep, { action: "deny", match: { tools: ["b"] } }],
    };
    const v2 = {
      default: "deny",
      on_error: "deny",
      rules: [
        { action: "warn", match: { tools: ["brand-new"] } },
        keep,
        { action: "allow", match: { tools: ["b"] } },
      ],
    };
    for (const doc of [v1, v2]) expect((await auditor("PUT", "/v1/policy", doc)).status).toBe(200);
    const agentId = (await auditor("POST", "/v1/agents", { name: "audited", upstream_url: upstream.url }))
      .json.id;
    expect((await auditor("PATCH", `/v1/agents/${agentId}`, { name: "audited-2" })).status).toBe(200);
    const secret = `audit-secret-${Date.now()}-do-not-show`;
    const cred = await auditor("POST", "/v1/credentials", { name: "audited-key", kind: "bearer", secret });
    expect((await auditor("PUT", `/v1/credentials/${cred.json.id}`, { secret: `${secret}-2` })).status).toBe(
      200,
    );

    const { page, errors } = await newPage();
    await signIn(page, auditor);
    await page.goto(`${gw.url}/console#/audit?action=policy.replace`);
    const replaced = page.locator("tr[data-audit]").first();
    await expect.poll(() => page.locator("tr[data-audit]").count()).toBe(2);
    const change = (path: string) => replaced.locator(`li[data-path="${path}"]`);
    await expect
      .poll(() => change("document.default").textContent())
      .toBe('document.default: "allow" → "deny"');
    expect(await change("version").textContent()).toBe("version: 1 → 2");
    expect(await change("document.rules[0]").getAttribute("data-change")).toBe("added");
    const added = (await change("document.rules[0]").textContent()) ?? "";
    expect(added).toMatch(/^document\.rules\[0\] added: \{.*\}$/);
    expect(added).toContain('"tools":["brand-new"]');
    expect(added).toContain('"action":"warn"');
    expect(await change("document.rules[2].action").textContent()).toBe(
      'document.rules[2].action: "deny" → "allow"',
    );
    // Only what changed: the rule kept as it was, and on_error, are not shown.
    expect(await replaced.locator("li").count()).toBe(4);
    expect(await replaced.textContent()).not.toContain("keep-me-as-i-am");
    expect(await replaced.textContent()).not.toContain("on_error");
    await shot(page, "14b-audit-policy-diff");

    await page.goto(`${gw.url}/console#/audit?action=agent.update`);
    await expect
      .poll(() => page.locator('tr[data-audit] li[data-path="name"]').textContent())
      .toBe('name: "audited" → "audited-2"');
    await page.goto(`${gw.url}/console#/audit?action=credential.rotate`);
    const rotated = page.locator('tr[data-audit] li[data-path="secret"]');
    await expect.poll(() => rotated.textContent()).toBe("secret (secret: changed, value not recorded)");
    expect(await page.content()).not.toContain(secret);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("draws the analytics charts from real calls", async (ctx) => {
    if (!(await surfaces()).analytics) {
      console.warn("chart step skipped: /v1/capabilities reports surfaces.analytics false on this build");
      return ctx.skip();
    }
    const agentId = (await call("POST", "/v1/agents", { name: "charted", upstream_url: upstream.url })).json
      .id;
    for (let i = 0; i < 3; i++) {
      const sent = await call("POST", `/v1/proxy/${agentId}`, `call ${i}`);
      await pollDone(call, agentId, sent.json.invocation_id);
    }
    const { page, errors } = await newPage();
    await signIn(page);
    await page.goto(`${gw.url}/console#/analytics?agent_id=${agentId}`);
    const canvas = page.getByTestId("chart-Throughput").locator("canvas");
    await canvas.waitFor();
    await expect
      .poll(async () => (await page.locator("main table:not(.u-legend)").allTextContents()).join(" "))
      .toContain("charted");
    // uPlot drew something: the canvas holds coloured (non-white, non-transparent) pixels.
    const inked = await page.evaluate(INKED_PIXELS);
    expect(inked).toBeGreaterThan(0);
    await shot(page, "11-analytics");
    await page.setViewportSize(PHONE);
    await shot(page, "12-analytics-phone");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("says on the overview which store the gateway runs on, and where: a data directory by its path", async () => {
    const parent = mkdtempSync(join(tmpdir(), "gw-console-"));
    const dataDir = join(parent, "data");
    const kept = await spawnGateway({ DATABASE_URL: undefined, GW_DATA_DIR: dataDir, GW_KMS_KEY: undefined });
    try {
      const { page, errors } = await newPage();
      const who = await token(newTenant());
      await page.goto(`${kept.url}/console`);
      await page.getByLabel("Access token").fill(who);
      await page.getByRole("button", { name: "Sign in" }).click();
      const deployment = () => page.locator("main").textContent();
      await expect
        .poll(deployment, { timeout: 30_000 })
        .toContain(`embedded, on disk in ${dataDir} (GW_DATA_DIR)`);
      expect(await deployment()).toContain("no: a development key kept in the data directory");
      await shot(page, "15-overview-data-dir");
      // This suite's own gateway: Postgres, or the embedded store in memory.
      await signIn(page);
      const store = (await call("GET", "/v1/capabilities")).json.posture.store;
      await expect.poll(deployment).toContain(store === "memory" ? "embedded, in memory" : "Postgres");
      expect(await deployment()).not.toContain("on disk in");
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      kept.child.kill("SIGTERM");
      await once(kept.child, "exit");
      rmSync(parent, { recursive: true, force: true });
    }
  }, 300_000); // a gateway process creating its store
});
