// `pnpm start` and `pnpm demo` load this before the gateway's entry (`node --import`): the console
// is built in the gateway's own process, so the gateway serves the current console — unless the
// command line asks for help, which the entry then answers at once, without a build
// (docs/console.md "Build").
import { stop } from "esbuild";
import { buildConsole } from "./build.mjs";

const args = process.argv.slice(2);
const end = args.indexOf("--");
const help = (end < 0 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
if (!help) {
  const files = await buildConsole();
  // esbuild's service process would otherwise live beside the gateway for as long as it runs.
  await stop();
  process.stderr.write(`console built: ${files.join(", ")}\n`);
}
