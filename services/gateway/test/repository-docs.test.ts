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

const MARKDOWN = ["README.md", ...filesUnder("docs", /\.md$/)];

/** The code of every package and service (src/, and the console's web/; tests may name anything). */
const SOURCES = ["packages", "services"].flatMap((top) =>
  readdirSync(join(ROOT, top)).flatMap((name) =>
    ["src", "web"].flatMap((dir) => filesUnder(join(top, name, dir), /\.(ts|tsx|mjs|js)$/)),
  ),
);

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

  it("sees the files it checks (a wrong root would pass vacuously)", () => {
    expect(MARKDOWN).toContain("docs/interface.md");
    expect(SOURCES).toContain("services/proxy/src/pipeline.ts");
  });
});
