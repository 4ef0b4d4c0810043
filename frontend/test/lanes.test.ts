import { describe, expect, it } from "vitest";
import { HANDLERS, initialRunState, reduceAll } from "../src/timeline/reducer";
import { TOOL_STEPS } from "../src/timeline/lanes";
import type { LanesBlock, RunState, Step } from "../src/timeline/state";
import type { Document, Packet, PacketObj } from "../src/types";
import { fixtures } from "./fixtures";

let seq = 0;
function p(obj: PacketObj, turn = 1, tab = 0, sub: number | null = null): Packet {
  return { seq: seq++, run_id: "r", placement: { turn_index: turn, tab_index: tab, sub_turn_index: sub }, obj } as Packet;
}

function doc(id: string): Document {
  return { id, url: `https://example.org/${id}`, title: id, snippet: "", source: "web" };
}

function steps(s: RunState, tab = 0): Step[] {
  const block = s.turns.flatMap((t) => t.blocks).find((b): b is LanesBlock => b.kind === "lanes");
  return block?.lanes.find((l) => l.tab === tab)?.steps ?? [];
}

const branching = () => p({ type: "top_level_branching", num_parallel_branches: 2 }, 1);

describe("the tool-step table (search and open_url)", () => {
  it("has one rule per phase of each tool, for its own step kind", () => {
    expect(Object.keys(TOOL_STEPS).sort()).toEqual(
      ["open_url_documents", "open_url_start", "open_url_urls", "search_documents", "search_queries", "search_start"].sort(),
    );
    for (const [type, rule] of Object.entries(TOOL_STEPS)) expect(type.startsWith(rule.kind)).toBe(true);
  });

  it("builds a search step: provider, queries, then documents that end it without marking pages read", () => {
    const s = reduceAll([
      branching(),
      p({ type: "search_start", provider: "local" }, 1, 1, 0),
      p({ type: "search_queries", queries: ["a", "b"] }, 1, 1, 0),
      p({ type: "search_queries", queries: ["c"] }, 1, 1, 0),
      p({ type: "search_documents", documents: [doc("d1"), doc("d2"), doc("d1")] }, 1, 1, 0),
    ]);
    const [step] = steps(s, 1);
    expect(step).toMatchObject({ index: 0, kind: "search", provider: "local", queries: ["a", "b", "c"], done: true });
    expect(step.documents.map((d) => d.id)).toEqual(["d1", "d2"]);
    expect(s.seenOrder).toEqual(["d1", "d2"]);
    expect(s.fetched).toEqual({});
  });

  it("builds an open_url step whose documents count as fetched", () => {
    const s = reduceAll([
      branching(),
      p({ type: "open_url_start" }, 1, 0, 2),
      p({ type: "open_url_urls", urls: ["https://example.org/d3"] }, 1, 0, 2),
      p({ type: "open_url_documents", documents: [doc("d3")] }, 1, 0, 2),
    ]);
    const [step] = steps(s);
    expect(step).toMatchObject({ index: 2, kind: "open_url", urls: ["https://example.org/d3"], done: true });
    expect(s.fetched).toEqual({ d3: true });
  });

  it("without a sub-turn, a start opens a new step and the other phases join the latest of their kind", () => {
    const s = reduceAll([
      branching(),
      p({ type: "search_start", provider: "one" }),
      p({ type: "search_queries", queries: ["q1"] }),
      p({ type: "open_url_start" }),
      p({ type: "search_start", provider: "two" }),
      p({ type: "search_queries", queries: ["q2"] }),
    ]);
    expect(steps(s).map((st) => [st.index, st.kind, st.provider, st.queries])).toEqual([
      [0, "search", "one", ["q1"]],
      [1, "open_url", undefined, []],
      [2, "search", "two", ["q2"]],
    ]);
  });

  it("puts the lane's agent to work on its first tool step", () => {
    const s = reduceAll([branching(), p({ type: "open_url_urls", urls: ["https://example.org/x"] }, 1, 1, 0)]);
    const lanes = s.turns.flatMap((t) => t.blocks).find((b): b is LanesBlock => b.kind === "lanes")?.lanes ?? [];
    expect(lanes.map((l) => l.status)).toEqual(["pending", "running"]);
  });
});

describe("the handler table", () => {
  it("has a handler for every packet type the engine sent in the recorded streams", () => {
    const sent = new Set(Object.values(fixtures).flatMap((ps) => ps.map((x) => x.obj.type)));
    expect(sent.size).toBeGreaterThan(15);
    expect([...sent].filter((t) => !(t in HANDLERS))).toEqual([]);
  });

  it("skips a packet type it does not know but counts its seq as applied", () => {
    const s = reduceAll([{ seq: 4, run_id: "r", placement: { turn_index: 0, tab_index: 0, sub_turn_index: null }, obj: { type: "from_the_future" } } as unknown as Packet]);
    expect(s).toEqual({ ...initialRunState(), runId: "r", lastSeq: 4 });
  });
});
