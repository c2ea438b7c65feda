import { parseArgs } from "node:util";

// The command line of every command the project ships (`pnpm start`, `pnpm dev-token`, `pnpm
// migrate`, `pnpm receipt`, `pnpm gw-verify`, ...). Imported by its own path
// (`@gw/core/command-line`, node:util only) so an entry point answers `--help` before it loads
// anything else.

type Options = Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }>;

/** What a parsed command line holds: each option given, typed by its declaration. */
type Values<O extends Options> = {
  [K in keyof O]?: O[K]["type"] extends "boolean"
    ? boolean
    : O[K]["multiple"] extends true
      ? string[]
      : string;
};

/** True when `args` ask for help: `--help` or `-h` anywhere before a `--`. */
export function helpRequested(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
  }
  return false;
}

/** `usage`, a blank line and `help` on stdout, then exit 0. */
export function printHelp(usage: string, help: string): never {
  process.stdout.write(`${usage}\n\n${help}\n`);
  process.exit(0);
}

/**
 * A command line, strictly: `--help` (or `-h`) anywhere prints `help` to stdout and exits 0 before
 * anything else is looked at (the environment included); an unknown option, a missing value or a
 * stray argument prints one line (what was wrong, then the usage) to stderr and exits 2, never a
 * stack trace. `positionals: true` lets the command take arguments (a subcommand, a file); `hint`
 * may add advice for an option the command does not take.
 */
export function commandLine<const O extends Options>(opts: {
  args: string[];
  options: O;
  usage: string;
  help: string;
  positionals?: boolean;
  hint?: (option: string) => string | undefined;
}): { values: Values<O>; positionals: string[] } {
  if (helpRequested(opts.args)) printHelp(opts.usage, opts.help);
  try {
    const parsed = parseArgs({
      args: opts.args,
      options: opts.options,
      strict: true,
      allowPositionals: opts.positionals ?? false,
    });
    return { values: parsed.values as Values<O>, positionals: parsed.positionals };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    if (!code.startsWith("ERR_PARSE_ARGS_")) throw e;
    const reason = describe(code, (e as Error).message);
    const name = /'(-[^' ]*)/.exec((e as Error).message)?.[1];
    const hint = code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && name ? opts.hint?.(name) : undefined;
    fail(`${reason}${hint ? ` (${hint})` : ""}`, opts.usage);
  }
}

/** One line on stderr, what was wrong then the usage, and exit 2. */
export function fail(reason: string, usage: string): never {
  process.stderr.write(`${reason}; ${usage}\n`);
  process.exit(2);
}

/** node:util's parse error, said in one short line without its suggestions. */
function describe(code: string, message: string): string {
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  const option = quoted.split(" ")[0];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown option ${option}`;
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") return `unexpected argument '${quoted}'`;
  if (/does not take an argument/.test(message)) return `${option} takes no value`;
  if (/ambiguous/.test(message)) return `${option} needs a value (one that begins with a dash: ${option}=-…)`;
  if (/missing/.test(message)) return `${option} needs a value`;
  return message.split("\n")[0] ?? message;
}
