import { describe, expect, it } from "vitest";
import { citingSentences, highlight, snippetPieces } from "../src/passages";
import { initialRunState, reduce } from "../src/timeline/reducer";
import type { Packet } from "../src/types";
import { viewerRequest } from "../src/viewerRequest";
import type { SourceInfo } from "../src/api";
import { accessBadge, sourceDetail } from "../src/sources";

const runStart = (extra: Record<string, unknown>): Packet =>
  ({
    seq: 0,
    run_id: "r1",
    placement: { turn_index: 0, tab_index: 0, sub_turn_index: null },
    obj: { type: "run_start", session_id: "s", question: "q", mode: "heavy", models: {}, ...extra },
  }) as Packet;

describe("run_start.sources", () => {
  it("records the names a run searched", () => {
    expect(reduce(initialRunState(), runStart({ sources: ["alpha", "duckduckgo"] })).sources).toEqual(["alpha", "duckduckgo"]);
  });
  it("treats a missing or malformed list as none", () => {
    expect(reduce(initialRunState(), runStart({})).sources).toEqual([]);
    expect(reduce(initialRunState(), runStart({ sources: ["ok", 3, null] })).sources).toEqual(["ok"]);
  });
});

describe("run_start.routes", () => {
  it("records which collections the question was routed to, and why", () => {
    const routes = [
      { name: "sqlite", searched: true, reason: "fits: sqlite, pragma" },
      { name: "python-reference", searched: false, reason: "does not fit the question" },
    ];
    expect(reduce(initialRunState(), runStart({ sources: ["python-reference", "sqlite"], routes })).routes).toEqual(routes);
  });
  it("treats a missing or malformed list as none", () => {
    expect(reduce(initialRunState(), runStart({})).routes).toEqual([]);
    expect(reduce(initialRunState(), runStart({ routes: [null, { name: 3 }, { name: "ok", searched: false }] })).routes).toEqual([
      { name: "ok", searched: false, reason: "" },
    ]);
  });
});

describe("passages", () => {
  const text = "Intro line.\n\nA descriptor is an object   attribute with\nbinding behavior. Other text follows here.";

  it("finds a passage across line breaks and runs of spaces, ignoring case", () => {
    const segments = highlight(text, ["a DESCRIPTOR is an object attribute with binding behavior."]);
    expect(segments.filter((s) => s.mark).map((s) => s.text)).toEqual([
      "A descriptor is an object   attribute with\nbinding behavior.",
    ]);
    expect(segments.map((s) => s.text).join("")).toBe(text); // nothing lost or duplicated
  });

  it("finds a passage whose names had their underscores cleaned off", () => {
    const doc = "Notes: data descriptors define __get__ and __set__ and take precedence. Other text.";
    const segments = highlight(doc, citingSentences("Data descriptors define `__get__` and `__set__` and take precedence [1].", 1));
    expect(segments.filter((s) => s.mark).map((s) => s.text)).toEqual(["data descriptors define __get__ and __set__ and take precedence"]);
  });

  it("merges overlapping passages and ignores ones not in the text", () => {
    const segments = highlight(text, ["descriptor is an object attribute", "object attribute with binding", "not in this document at all"]);
    expect(segments.filter((s) => s.mark).map((s) => s.text)).toEqual(["descriptor is an object   attribute with\nbinding"]);
  });

  it("takes the sentences of a report that cite a number", () => {
    const md = "## Findings\n\n- A descriptor is an object attribute with binding behavior [2]. Unrelated claim here [3].\nThird sentence is long enough [2][3].";
    expect(citingSentences(md, 2)).toEqual(["A descriptor is an object attribute with binding behavior", "Third sentence is long enough"]);
    expect(citingSentences(md, 3)).toEqual(["Unrelated claim here", "Third sentence is long enough"]);
  });

  it("splits a search snippet into its pieces without highlight marks", () => {
    expect(snippetPieces("Heading: …the «descriptor» protocol is defined…short…")).toEqual(["the descriptor protocol is defined"]);
  });

  it("builds a viewer request from a cited source", () => {
    const req = viewerRequest(
      { id: "d", url: "corpus://kb/a.md", title: "A", snippet: "…the «descriptor» protocol is defined here…", source: "local", number: 1 },
      "The descriptor protocol is defined here [1].",
      "s_1",
    );
    expect(req).toEqual({
      url: "corpus://kb/a.md",
      title: "A",
      passages: ["The descriptor protocol is defined here", "the descriptor protocol is defined here"],
      sessionId: "s_1",
    });
  });
});

describe("sourceDetail", () => {
  const mcp = (extra: Partial<SourceInfo>): SourceInfo => ({
    name: "notes",
    kind: "mcp",
    documents: null,
    default: true,
    tools: null,
    state: null,
    reason: null,
    ...extra,
  });
  it("counts a ready MCP server's tools", () => {
    expect(sourceDetail(mcp({ state: "ready", tools: 3 }))).toEqual({ text: "MCP: 3 tools", problem: null });
    expect(sourceDetail(mcp({ state: "ready", tools: 1 }))).toEqual({ text: "MCP: 1 tool", problem: null });
  });
  it("says why an MCP server is unavailable, and when it is still starting", () => {
    expect(sourceDetail(mcp({ state: "unavailable", reason: "did not start within 1 s" }))).toEqual({
      text: "MCP: unavailable",
      problem: "did not start within 1 s",
    });
    expect(sourceDetail(mcp({ state: "starting" })).text).toBe("MCP: starting…");
  });
  it("keeps documents for collections and a label for web providers", () => {
    expect(sourceDetail({ ...mcp({}), kind: "local", documents: 1 }).text).toBe("1 document");
    expect(sourceDetail({ ...mcp({}), kind: "web" }).text).toBe("web search");
  });
});

describe("accessBadge", () => {
  const local = (extra: Partial<SourceInfo>): SourceInfo => ({
    name: "notes",
    kind: "local",
    documents: 2,
    default: true,
    tools: null,
    state: null,
    reason: null,
    ...extra,
  });
  it("marks the caller's private upload and a shared one, and no collection that is everyone's", () => {
    expect(accessBadge(local({ visibility: "private", editable: true }))?.text).toBe("private");
    expect(accessBadge(local({ visibility: "shared", editable: false }))).toEqual({
      text: "shared",
      title: "Another user's upload, shared with you read-only",
    });
    expect(accessBadge(local({ visibility: "shared", editable: true }))?.title).toMatch(/^Your upload, shared/);
    expect(accessBadge(local({ visibility: "everyone" }))).toBeNull();
    expect(accessBadge(local({}))).toBeNull();
  });
});
