import { parseArgs } from "node:util";

type Options = Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }>;

/** What a parsed command line holds: each option given, typed by its declaration. */
type Values<O extends Options> = {
  [K in keyof O]?: O[K]["type"] extends "boolean"
    ? boolean
    : O[K]["multiple"] extends true
      ? string[]
      : string;
};

/**
 * The command line of one of the gateway's commands (`pnpm start`, `pnpm dev-token`), strictly:
 * `--help` (or `-h`) prints `help` to stdout and exits 0; an unknown option, a missing value or a
 * stray argument prints one line (what was wrong, then the usage) to stderr and exits 2, never a
 * stack trace. `hint` may add advice for an option the command does not take.
 */
export function commandLine<const O extends Options>(opts: {
  args: string[];
  options: O;
  usage: string;
  help: string;
  hint?: (option: string) => string | undefined;
}): Values<O> {
  const options: Options = { ...opts.options, help: { type: "boolean", short: "h" } };
  let values: Values<O> & { help?: boolean };
  try {
    values = parseArgs({ args: opts.args, options, strict: true, allowPositionals: false })
      .values as Values<O>;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    if (!code.startsWith("ERR_PARSE_ARGS_")) throw e;
    const reason = describe(code, (e as Error).message);
    const name = /'(-[^' ]*)/.exec((e as Error).message)?.[1];
    const hint = code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && name ? opts.hint?.(name) : undefined;
    fail(`${reason}${hint ? ` (${hint})` : ""}`, opts.usage);
  }
  if (values.help) {
    process.stdout.write(`${opts.usage}\n\n${opts.help}\n`);
    process.exit(0);
  }
  return values;
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
