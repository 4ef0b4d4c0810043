import { describe, expect, it } from "vitest";
import { collapsesTimeline, digestLine, runDigest } from "../src/timeline/digest";
import { reduceAll } from "../src/timeline/reducer";
import type { Packet, PacketObj } from "../src/types";

function builder() {
  let seq = 0;
  // fields the server always sends but a test does not need are left out
  return (obj: { type: PacketObj["type"] } & Record<string, unknown>, turn: number, tab = 0, sub: number | null = null): Packet => ({
    seq: seq++,
    run_id: "r1",
    placement: { turn_index: turn, tab_index: tab, sub_turn_index: sub },
    obj: obj as PacketObj,
  });
}

describe("run digest", () => {
  const p = builder();
  const packets = [
    p({ type: "run_start", session_id: "s", question: "q", mode: "heavy", models: {} }, 0),
    p({ type: "plan_done", steps: ["a", "b"] }, 1),
    p({ type: "plan_reviewed", outcome: "revising", steps: ["a", "b"] }, 1),
    p({ type: "plan_done", steps: ["a", "b", "c", "d", "e"] }, 2),
    p({ type: "top_level_branching", num_parallel_branches: 3 }, 3),
    ...[0, 1, 2].map((tab) => p({ type: "research_agent_start", task: `t${tab}` }, 3, tab)),
    p({ type: "top_level_branching", num_parallel_branches: 2 }, 4),
    ...[0, 1].map((tab) => p({ type: "research_agent_start", task: `u${tab}` }, 4, tab)),
    p({ type: "report", report_id: "rep", markdown: "x", sources: [] }, 5),
    p(
      { type: "summary", elapsed_s: 42.4, sources_seen: 1, sources_fetched: 1, sources_cited: 1, input_tokens: 1, output_tokens: 1, cost_usd: 0 },
      5,
    ),
  ];

  it("counts the plan it followed, every agent and every cycle", () => {
    const s = reduceAll(packets);
    expect(runDigest(s)).toEqual({ steps: 5, agents: 5, cycles: 2, elapsedS: 42.4 });
    expect(digestLine(runDigest(s))).toBe("Researched 5 steps with 5 agents in 2 cycles · 0:42");
  });

  it("folds the timeline only once the run has completed with a report", () => {
    expect(collapsesTimeline(reduceAll(packets))).toBe(false); // still running
    const done = reduceAll([...packets, p({ type: "stop", reason: "completed" }, 5)]);
    expect(collapsesTimeline(done)).toBe(true);
    const cancelled = reduceAll([...packets, p({ type: "stop", reason: "cancelled" }, 5)]);
    expect(collapsesTimeline(cancelled)).toBe(false);
  });

  it("says one of each without plurals", () => {
    expect(digestLine({ steps: 1, agents: 1, cycles: 1, elapsedS: null })).toBe("Researched 1 step with 1 agent in 1 cycle");
  });
});
