import { isRecord } from "@gw/jsonrpc";
import MiniSearch from "minisearch";

/** A tool as the index holds it: its exposed name and the definition search answers with. */
export type IndexedTool = { readonly name: string; readonly definition: Readonly<Record<string, unknown>> };

export type ToolIndex = {
  /** How many tools it holds. */
  readonly size: number;
  /**
   * The tools best matching `query`, best first, at most `limit` of those `keep` accepts (the
   * caller's filter runs on ranked hits, so a denied tool never takes a place in the answer).
   */
  search: (query: string, limit: number, keep?: (name: string) => boolean) => IndexedTool[];
};

/** Nesting of `inputSchema` properties whose names and descriptions are indexed. */
const MAX_SCHEMA_DEPTH = 4;
/** A definition's text is indexed up to this many characters per field (a huge description does not swamp the index). */
const MAX_FIELD_CHARS = 16_384;

/**
 * Words that say nothing about which tool is meant: dropped from names, texts and queries alike,
 * so "show me all the files in my folder" ranks on "show files folder".
 */
const STOP_WORDS = new Set(
  (
    "a an the to of for in on at by with from and or but as into onto about over via per " +
    "my me i we our us you your it its is are be been was were this that these those there here " +
    "some any all each every please can could would should will shall may might must want need " +
    "do does did how what which who whom whose when where why get gets let lets just also then " +
    "than so such only very more most other using use used"
  ).split(" "),
);

/**
 * Verbs and nouns tool names spell in one way and people in another. A query term also looks for
 * its synonyms, at half the weight of the term itself.
 */
const SYNONYM_GROUPS = [
  "create add make open start insert register book",
  "delete remove drop erase destroy trash discard",
  "update edit modify change set rename patch alter",
  "list show enumerate browse display",
  "read fetch retrieve view load",
  "find search lookup look query locate",
  "send post message notify tell ping dm email",
  "write save store put",
  "close resolve finish complete end",
  "run execute invoke trigger launch",
  "upload attach",
  "download export",
  "copy duplicate clone",
  "move transfer",
  "email mail inbox",
  "file document doc",
  "folder directory dir",
  "user member person people account",
  "issue ticket",
  "repo repository",
  "calendar schedule book",
  "undo revert rollback roll",
  "free available availability busy",
  "bug issue defect crash",
  "meeting event appointment",
  "cancel abort stop",
  "comment reply note",
  "pay payment charge invoice bill",
  "image picture photo",
  "summary summarize summarise",
  "weather forecast",
  "table sheet spreadsheet",
];

const SYNONYMS: ReadonlyMap<string, readonly string[]> = (() => {
  const out = new Map<string, string[]>();
  for (const group of SYNONYM_GROUPS) {
    const words = group.split(" ").map(stem);
    for (const w of words) {
      const others = words.filter((x) => x !== w);
      out.set(w, [...new Set([...(out.get(w) ?? []), ...others])]);
    }
  }
  return out;
})();

/**
 * A light English stemmer: plural and verb endings folded so that "creating", "created" and
 * "creates" meet "create" ("creat"), "repositories" meets "repository". Applied alike to what is
 * indexed and what is asked.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith("ies")) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith("s") && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = undouble(w.slice(0, -3));
  else if (w.length > 4 && w.endsWith("ed")) w = undouble(w.slice(0, -2));
  else if (w.length > 5 && w.endsWith("ly")) w = w.slice(0, -2);
  if (w.length > 4 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}

function undouble(w: string): string {
  const n = w.length;
  return n > 2 && w[n - 1] === w[n - 2] && !/[lsz]/.test(w[n - 1] as string) ? w.slice(0, -1) : w;
}

/**
 * The words of a name or a text: split at anything that is not a letter or digit (`_`, `-`, `.`,
 * `/`, spaces) and at camelCase humps ("getHTTPStatus" → get, http, status), lower-cased.
 */
export function words(text: string): string[] {
  // ASCII text (names, most descriptions) takes the plain patterns: the Unicode ones cost more.
  const [split, humps] = NON_ASCII.test(text) ? UNICODE_RE : ASCII_RE;
  const out: string[] = [];
  for (const part of text.split(split)) {
    if (part === "") continue;
    for (const w of part.split(humps)) {
      if (w !== "") out.push(w.toLowerCase());
    }
  }
  return out;
}

const NON_ASCII = /[^\p{ASCII}]/u;
const ASCII_RE = [/[^A-Za-z0-9]+/, /(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/] as const;
const UNICODE_RE = [/[^\p{L}\p{N}]+/u, /(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u] as const;

/** A word as it is indexed and asked: null for a stop word. */
function term(word: string): string | null {
  return STOP_WORDS.has(word) ? null : stem(word);
}

type Doc = { id: number; name: string; title: string; description: string; params: string };

/**
 * Builds the index of a catalog's tools (docs/mcp.md, Tool search on virtual servers): BM25
 * ranking (MiniSearch) over the exposed name split into words, the title, the description, and
 * the names and descriptions of the input's parameters. Built once per catalog version; a search
 * reads it and writes nothing.
 */
export function buildToolIndex(tools: readonly IndexedTool[]): ToolIndex {
  const docs: Doc[] = tools.map((t, id) => docOf(id, t));
  const index = new MiniSearch<Doc>({
    fields: ["name", "title", "description", "params"],
    tokenize: words,
    processTerm: term,
    searchOptions: {
      boost: { name: 1.5, title: 1.5, description: 1, params: 0.5 },
      combineWith: "OR",
      prefix: (t) => t.length >= 4,
      fuzzy: (t) => (t.length >= 6 ? 0.15 : false),
      weights: { fuzzy: 0.3, prefix: 0.5 },
    },
  });
  index.addAll(docs);
  return {
    size: tools.length,
    search(query, limit, keep) {
      const asked = queryTerms(query);
      if (asked.size === 0) return [];
      const hits = index.search([...asked.keys()].join(" "), {
        // The caller's own words count fully; synonyms half.
        boostTerm: (t) => asked.get(t) ?? 0.5,
        tokenize: (s) => s.split(" "),
        processTerm: (t) => t,
      });
      const out: IndexedTool[] = [];
      for (const hit of hits) {
        const tool = tools[hit.id as number];
        if (!tool || (keep && !keep(tool.name))) continue;
        out.push(tool);
        if (out.length >= limit) break;
      }
      return out;
    },
  };
}

/** The query's terms (weight 1) and their synonyms (weight 0.5), stemmed, without stop words. */
function queryTerms(query: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const w of words(query)) {
    const t = term(w);
    if (t === null) continue;
    out.set(t, 1);
  }
  for (const t of [...out.keys()]) {
    for (const s of SYNONYMS.get(t) ?? []) if (!out.has(s)) out.set(s, 0.5);
  }
  return out;
}

function docOf(id: number, tool: IndexedTool): Doc {
  const d = tool.definition;
  const annotations = isRecord(d.annotations) ? d.annotations : {};
  const title =
    typeof d.title === "string" ? d.title : typeof annotations.title === "string" ? annotations.title : "";
  const params: string[] = [];
  paramsText(d.inputSchema, 0, params);
  return {
    id,
    name: tool.name,
    title: clip(title),
    description: clip(typeof d.description === "string" ? d.description : ""),
    params: clip(params.join(" ")),
  };
}

/** Property names (split into words by the tokenizer), their descriptions and string enum values. */
function paramsText(schema: unknown, depth: number, out: string[]): void {
  if (!isRecord(schema) || depth > MAX_SCHEMA_DEPTH) return;
  if (typeof schema.description === "string" && depth > 0) out.push(schema.description);
  if (Array.isArray(schema.enum)) for (const e of schema.enum) if (typeof e === "string") out.push(e);
  if (isRecord(schema.properties)) {
    for (const [name, sub] of Object.entries(schema.properties)) {
      out.push(name);
      paramsText(sub, depth + 1, out);
    }
  }
  if (isRecord(schema.items)) paramsText(schema.items, depth + 1, out);
}

function clip(s: string): string {
  return s.length > MAX_FIELD_CHARS ? s.slice(0, MAX_FIELD_CHARS) : s;
}
