// @stores once: spawns pnpm start, which picks its own store.
// `pnpm start` as a user runs it (the real command: pnpm, its shell, the gateway): a signal sent to
// the pnpm process stops the gateway the graceful way and frees the port; a port in use, an option
// it does not take and `--help` each answer one clear line or text, never a stack trace.
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { groupAlive, pnpmRun } from "./helpers.ts";

/** `pnpm start <args>` in its own process group. */
const pnpmStart = (env: Record<string, string | undefined>, args: string[] = []) =>
  pnpmRun("start", env, args);

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** A stack trace's frames, which no answer of a command should show. */
const STACK = /^\s+at .+\(.+:\d+:\d+\)$/m;

describe("pnpm start", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "%s sent to the pnpm process (not its group) stops the gateway gracefully and frees the port; meanwhile a second start on that PORT says so in one line",
    async (signal) => {
      const gw = pnpmStart({ PORT: "0", GW_DEV_JWT_SECRET: undefined });
      const pid = gw.child.pid as number;
      try {
        await expect
          .poll(() => /"port":(\d+),"store"/.exec(gw.stdout())?.[1], { timeout: 120_000, interval: 200 })
          .toBeDefined();
        const port = Number(/"port":(\d+),"store"/.exec(gw.stdout())?.[1]);
        expect(await portOpen(port)).toBe(true);

        // The port is taken: the next start says which variable to change, once, and exits.
        const second = pnpmStart({ PORT: String(port), GW_DEV_JWT_SECRET: undefined });
        expect(await second.exited).not.toBe(0);
        const lines = second.stderr().split("\n");
        expect(lines.filter((l) => l.includes(String(port)))).toEqual([
          `PORT ${port} is already in use; set PORT to another port`,
        ]);
        expect(second.stderr()).not.toMatch(STACK);
        expect(second.stderr() + second.stdout()).not.toContain("EADDRINUSE");
        // Found before the store was opened: nothing was migrated for a start that cannot serve.
        expect(second.stdout()).not.toContain("migrations applied");

        process.kill(pid, signal);
        await gw.exited;
        // Every process pnpm started is gone, the port is free, and the drain ran to its end.
        await expect.poll(() => groupAlive(pid), { timeout: 30_000, interval: 100 }).toBe(false);
        expect(await portOpen(port)).toBe(false);
        expect(gw.stdout()).toContain(`"signal":"${signal}","msg":"shutting down"`);
        expect(gw.stdout()).toContain("shutdown complete");
      } finally {
        if (groupAlive(pid)) process.kill(-pid, "SIGKILL");
      }
    },
    240_000, // two starts of the real command under a loaded machine
  );

  it("refuses an option it does not take, naming PORT for --port, and starts nothing", async () => {
    const run = pnpmStart({ PORT: "0" }, ["--port", "18999"]);
    expect(await run.exited).toBe(2);
    const said = run
      .stderr()
      .split("\n")
      .filter((l) => l.includes("usage:"));
    expect(said).toEqual([
      "unknown option --port (the port is set by the environment: PORT=18999 pnpm start); usage: pnpm start [--demo] [--help]",
    ]);
    expect(run.stdout()).not.toContain("listening");
    expect(run.stderr()).not.toMatch(STACK);
  }, 120_000);

  it("--help says what it accepts and exits 0 without starting, or building the console first", async () => {
    const run = pnpmStart({ PORT: "0" }, ["--help"]);
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toContain("usage: pnpm start [--demo] [--help]");
    expect(run.stdout()).toContain("PORT=18999 pnpm start");
    expect(run.stdout()).not.toContain("listening");
    // A start builds the console and says so; a question about the command does not wait for it.
    expect(run.stderr()).not.toContain("console built");
  }, 120_000);
});
