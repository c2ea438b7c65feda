import { corpusCatalog, SEARCH_CASES } from "@gw/fixtures";
import { describe, expect, it } from "vitest";
import { buildToolIndex, stem, words } from "./search-index.ts";

describe("tool search index: words", () => {
  it("splits names at _, -, ., / and camelCase humps, lower-cased", () => {
    expect(words("gh__create_issue")).toEqual(["gh", "create", "issue"]);
    expect(words("createPullRequest")).toEqual(["create", "pull", "request"]);
    expect(words("get-HTTPStatus.v2")).toEqual(["get", "http", "status", "v2"]);
    expect(words("files/read_file")).toEqual(["files", "read", "file"]);
    expect(words("  ")).toEqual([]);
  });

  it("folds plural and verb endings so that a word's forms meet", () => {
    for (const [a, b] of [
      ["create", "creating"],
      ["create", "created"],
      ["issue", "issues"],
      ["repository", "repositories"],
      ["run", "running"],
      ["private", "privately"],
      ["file", "files"],
    ] as const) {
      expect(stem(a), `${a} ~ ${b}`).toBe(stem(b));
    }
    expect(stem("status")).toBe("status");
  });
});

describe("tool search index: ranking", () => {
  const catalog = corpusCatalog(306);
  const index = buildToolIndex(catalog);

  it("finds the intended tool in the top 5 for at least 90 % of the realistic queries", () => {
    const missed = SEARCH_CASES.filter(([q, want]) => !index.search(q, 5).some((t) => t.name === want));
    expect(SEARCH_CASES).toHaveLength(25);
    expect(missed.length, JSON.stringify(missed)).toBeLessThanOrEqual(2);
  });

  it("reads descriptions and parameter names and descriptions, not only names", () => {
    const tools = [
      {
        name: "a__tool_one",
        definition: { name: "tool_one", description: "Converts temperatures to kelvin." },
      },
      {
        name: "a__tool_two",
        definition: {
          name: "tool_two",
          inputSchema: {
            type: "object",
            properties: {
              postcode: { type: "string", description: "Where the parcel goes" },
              carrier: { type: "string", enum: ["fedex", "ups"] },
            },
          },
        },
      },
      { name: "a__tool_three", definition: { name: "tool_three" } },
    ];
    const small = buildToolIndex(tools);
    expect(small.search("kelvin", 5).map((t) => t.name)).toEqual(["a__tool_one"]);
    expect(small.search("postcode", 5).map((t) => t.name)).toEqual(["a__tool_two"]);
    expect(small.search("parcel", 5).map((t) => t.name)).toEqual(["a__tool_two"]);
    expect(small.search("fedex", 5).map((t) => t.name)).toEqual(["a__tool_two"]);
    expect(small.search("three", 5).map((t) => t.name)).toEqual(["a__tool_three"]);
  });

  it("answers the definitions as indexed, best first, at most limit", () => {
    const found = index.search("pull request", 3);
    expect(found).toHaveLength(3);
    for (const t of found) {
      expect(t.name).toMatch(/pull_request/);
      expect(t.definition).toMatchObject({ name: expect.any(String), inputSchema: { type: "object" } });
    }
    expect(index.search("pull request", 1)).toEqual([found[0]]);
  });

  it("leaves out what keep refuses, without giving up a place in the answer", () => {
    const all = index.search("send an email", 5).map((t) => t.name);
    expect(all).toContain("comms__send_email");
    const kept = index.search("send an email", 5, (name) => name !== "comms__send_email");
    expect(kept.map((t) => t.name)).not.toContain("comms__send_email");
    expect(kept).toHaveLength(5);
  });

  it("finds nothing for a query of stop words or of words no tool has", () => {
    expect(index.search("the of and to", 10)).toEqual([]);
    expect(index.search("zzqxv", 10)).toEqual([]);
    expect(buildToolIndex([]).search("anything", 10)).toEqual([]);
  });

  it("indexes a huge description without failing, and tools without one", () => {
    const big = buildToolIndex([
      { name: "x", definition: { description: `${"filler ".repeat(100_000)} needle` } },
      { name: "y", definition: { description: 42, inputSchema: "not a schema" } },
    ]);
    expect(big.size).toBe(2);
    expect(big.search("filler", 5).map((t) => t.name)).toEqual(["x"]);
    expect(big.search("y", 5).map((t) => t.name)).toEqual(["y"]);
  });
});
