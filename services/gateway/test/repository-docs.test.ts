// The repository stands alone: README and docs/ link only to files that exist (and to headings
// that exist in them), and neither they nor the source cite a design file outside the repository.
// docs.test.ts is the served API reference (GET /docs); this file is the Markdown beside the code.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Files under `dir` (relative to the root) whose name matches `pattern`, build output aside. */
function filesUnder(dir: string, pattern: RegExp): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return (readdirSync(abs, { recursive: true }) as string[])
    .filter((f) => pattern.test(f) && !/(^|\/)(node_modules|dist)\//.test(f))
    .map((f) => join(dir, f))
    .filter((f) => statSync(join(ROOT, f)).isFile());
}

const MARKDOWN = ["README.md", "CHANGELOG.md", ...filesUnder("docs", /\.md$/)];

/** The code of every package and service (src/, and the console's web/; tests may name anything). */
const SOURCES = ["packages", "services"].flatMap((top) =>
  readdirSync(join(ROOT, top)).flatMap((name) =>
    ["src", "web"].flatMap((dir) => filesUnder(join(top, name, dir), /\.(ts|tsx|mjs|js)$/)),
  ),
);

/** Every file under `dir` whose name matches `pattern`, not descending into `skip` directories. */
function walk(dir: string, pattern: RegExp, skip: RegExp): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return skip.test(e.name) ? [] : walk(path, pattern, skip);
    return e.isFile() && pattern.test(e.name) ? [path] : [];
  });
}

/** Files written elsewhere and copied in unchanged: not ours to word. */
const VENDORED = new Set(["services/gateway/conformance/reference-server.ts"]);

/**
 * Everything written for the project that could speak of how it was made: the docs (the changelog
 * aside: history is its subject), and every source, test, migration, bench and infra file with its
 * comments (this file aside: it shows the pattern what to catch).
 */
const WRITTEN = [
  ...MARKDOWN.filter((f) => f !== "CHANGELOG.md"),
  ...["packages", "services", "bench", "test", "infra"].flatMap((top) =>
    walk(top, /\.(ts|tsx|mts|mjs|js|sql|ya?ml|tpl|md)$/, /^(node_modules|dist|results)$/),
  ),
].filter((f) => !VENDORED.has(f) && f !== relative(ROOT, fileURLToPath(import.meta.url)));

/**
 * The history of the project's own making: an issue, pull request, session or round by number, or
 * "the fifth round", "last session". Nothing else the code says has these words before a number
 * (JSON-RPC ids, HTTP statuses, RFC and ADR numbers, "one round trip", "mcp-session-id" pass).
 */
const HISTORY =
  /\bissues?\s+#?\d|\b(?:PR|pull request)\s*#\d|\bsessions?\s+#?\d|\bround\s+#?\d+\b(?![.,]\d)|\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|this|last|previous|earlier)\s+round\b(?!\s+trip)|\b(?:last|previous|earlier)\s+session\b/i;

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/ /g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of withoutCode(markdown).split("\n")) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m?.[1]) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Fenced blocks hold shell and sample output, not links or headings. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** Every relative link target of a Markdown file, with the line it is on. */
function linksOf(markdown: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  withoutCode(markdown)
    .split("\n")
    .forEach((text, i) => {
      for (const m of text.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1] ?? "";
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        out.push({ target, line: i + 1 });
      }
    });
  return out;
}

describe("the repository's own documents", () => {
  it("link only to files and headings that exist", () => {
    const broken: string[] = [];
    for (const file of MARKDOWN) {
      const text = readFileSync(join(ROOT, file), "utf8");
      for (const { target, line } of linksOf(text)) {
        const [path = "", anchor] = target.split("#");
        const dest = path === "" ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURI(path));
        const where = `${file}:${line} → ${target}`;
        if (!existsSync(dest)) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (anchor && dest.endsWith(".md") && !anchorsOf(readFileSync(dest, "utf8")).has(anchor)) {
          broken.push(`${where} (no such heading in ${relative(ROOT, dest)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("cite no design file outside the repository (README, docs, every package's and service's src)", () => {
    const outside = /DESIGN\.md|\bDESIGN §|\.\.\/shared\b|interface-spec\.md/;
    const citing = [...MARKDOWN, ...SOURCES].flatMap((file) =>
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .flatMap((text, i) => (outside.test(text) ? [`${file}:${i + 1}`] : [])),
    );
    expect(citing).toEqual([]);
  });

  it("speak of the project, not of the history of its making (no issue, session or round numbers)", () => {
    const citing = WRITTEN.flatMap((file) =>
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .flatMap((text, i) => (HISTORY.test(text) ? [`${file}:${i + 1}: ${text.trim()}`] : [])),
    );
    expect(citing).toEqual([]);
  });

  it("tell a history reference from what only looks like one", () => {
    const history = [
      "a 500 (issue 24)",
      "Issue 14 asks for half the bare proxy's throughput.",
      "see PR #3002",
      "2026-11-27 (session 9),",
      "Fifth round, measured on a faster machine",
      "faster than the last round's",
      "What this round changed",
      "the figures of round 3",
      "as the last session left it",
    ];
    const ours = [
      '{"jsonrpc":"2.0","id":24,"method":"tools/list"}',
      "answers 404 (RFC 9110), see ADR 0024",
      "one Redis round trip per lease; each round starts with a different target",
      "gateway +3.26 ms, rounds 2.77–3.35",
      "3 rounds, 5 s per load step",
      '"mcp-session-id": "s-1", session.started',
      "if (state.round === 1) return { round: 2 };",
      "the first valibot issue as a message",
    ];
    expect(history.filter((t) => !HISTORY.test(t))).toEqual([]);
    expect(ours.filter((t) => HISTORY.test(t))).toEqual([]);
  });

  it("sees the files it checks (a wrong root would pass vacuously)", () => {
    expect(MARKDOWN).toContain("docs/interface.md");
    expect(SOURCES).toContain("services/proxy/src/pipeline.ts");
    for (const f of ["bench/src/main.ts", "packages/db/migrations/0010_open_rows_by_completed_at.sql"])
      expect(WRITTEN).toContain(f);
    expect(WRITTEN).toContain("services/gateway/conformance/run.ts");
    expect(WRITTEN.filter((f) => VENDORED.has(f) || f.includes("node_modules"))).toEqual([]);
  });
});
