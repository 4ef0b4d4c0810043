import { describe, expect, it } from "vitest";
import { initialRunState, reduce, reduceAll } from "../src/timeline/reducer";
import type { Block, Lane, LanesBlock, MessageBlock, PlanBlock, RunState, ThinkingBlock } from "../src/timeline/state";
import { allLanes, finalReport, findPlan, lastMessage, planStepStates, progressOf, sourceLists } from "../src/timeline/selectors";
import type { Packet, PacketObj } from "../src/types";
import { fixture, fixtures } from "./fixtures";

/** A packet builder that numbers seq itself, like the server's emitter. */
function builder(runId = "r1") {
  let seq = 0;
  return (obj: PacketObj | Record<string, unknown>, turn = 0, tab = 0, sub: number | null = null): Packet => ({
    seq: seq++,
    run_id: runId,
    placement: { turn_index: turn, tab_index: tab, sub_turn_index: sub },
    obj: obj as PacketObj,
  });
}

function blocksOf<K extends Block["kind"]>(s: RunState, kind: K): Extract<Block, { kind: K }>[] {
  return s.turns.flatMap((t) => t.blocks.filter((b): b is Extract<Block, { kind: K }> => b.kind === kind));
}

function lanesOfTurn(s: RunState, turn: number): Lane[] {
  const t = s.turns.find((x) => x.index === turn);
  const b = t?.blocks.find((x): x is LanesBlock => x.kind === "lanes");
  return b?.lanes ?? [];
}

describe("reducer basics", () => {
  it("starts empty and records run_start", () => {
    const p = builder();
    const s = reduce(initialRunState(), p({ type: "run_start", session_id: "s1", question: "Q?", mode: "heavy", models: { report: "m" } }));
    expect(s.runId).toBe("r1");
    expect(s.sessionId).toBe("s1");
    expect(s.question).toBe("Q?");
    expect(s.mode).toBe("heavy");
    expect(s.status).toBe("running");
    expect(s.lastSeq).toBe(0);
  });

  it("does not mutate its input state", () => {
    const packets = fixture("happy-3-lanes-2-cycles");
    let s = initialRunState();
    for (const pk of packets) {
      const before = JSON.stringify(s);
      const frozen = s;
      const next = reduce(s, pk);
      expect(JSON.stringify(frozen)).toBe(before);
      s = next;
    }
  });

  it("orders turns by turn_index even if a later turn's packet arrives first", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "reasoning_start", reasoning: "b" }, 2),
      p({ type: "plan_start", content: "a" }, 0),
      p({ type: "reasoning_start", reasoning: "c" }, 1),
    ]);
    expect(s.turns.map((t) => t.index)).toEqual([0, 1, 2]);
  });

  it("ignores a packet whose seq it already applied (duplicate after resume)", () => {
    const p = builder();
    const a = p({ type: "plan_start", content: "" });
    const b = p({ type: "plan_delta", content: "1. Step" });
    const s1 = reduceAll([a, b]);
    const s2 = reduce(reduce(s1, b), a);
    expect(s2).toBe(s1);
    expect((findPlan(s2) as PlanBlock).content).toBe("1. Step");
  });

  it("replaying a whole stream twice (reconnect from scratch) changes nothing", () => {
    const packets = fixture("happy-3-lanes-2-cycles");
    const once = reduceAll(packets);
    const twice = reduceAll(packets, once);
    expect(twice).toBe(once);
  });

  it("resuming mid-stream with overlap gives the same state as one clean pass", () => {
    const packets = fixture("happy-3-lanes-2-cycles");
    const clean = reduceAll(packets);
    const cut = 40;
    // The first connection got 0..cut; the resumed one re-sends a few before the cut.
    const resumed = reduceAll(packets.slice(cut - 5), reduceAll(packets.slice(0, cut)));
    expect(resumed).toEqual(clean);
  });

  it("ignores unknown packet types but counts their seq", () => {
    const p = builder();
    const s1 = reduceAll([p({ type: "plan_start", content: "x" })]);
    const s2 = reduce(s1, p({ type: "brand_new_thing", foo: 1 }));
    expect(s2.turns).toBe(s1.turns);
    expect(s2.lastSeq).toBe(1);
    const s3 = reduce(s2, p({ type: "plan_delta", content: "y" }));
    expect((findPlan(s3) as PlanBlock).content).toBe("xy");
  });

  it("ignores malformed packets and packets of another run", () => {
    const p = builder("r1");
    const s1 = reduceAll([p({ type: "plan_start", content: "x" })]);
    expect(reduce(s1, {} as Packet)).toBe(s1);
    expect(reduce(s1, { seq: 5, run_id: "r1", placement: { turn_index: 0, tab_index: 0, sub_turn_index: null } } as unknown as Packet)).toBe(s1);
    const other = { ...p({ type: "plan_delta", content: "z" }), run_id: "r2" };
    expect(reduce(s1, other)).toBe(s1);
  });

  it("tolerates a missing placement (defaults to turn 0, tab 0, top)", () => {
    const s = reduce(initialRunState(), { seq: 0, run_id: "r", obj: { type: "plan_start", content: "p" } } as unknown as Packet);
    expect(s.turns[0].index).toBe(0);
    expect(findPlan(s)?.content).toBe("p");
  });
});

describe("plan", () => {
  it("streams, then plan_done sets the steps", () => {
    const p = builder();
    let s = reduceAll([p({ type: "plan_start", content: "" }), p({ type: "plan_delta", content: "1. Fir" }), p({ type: "plan_delta", content: "st\n2. Second" })]);
    let plan = findPlan(s)!;
    expect(plan.content).toBe("1. First\n2. Second");
    expect(plan.steps).toBeNull();
    expect(plan.done).toBe(false);
    s = reduce(s, p({ type: "plan_done", steps: ["First", "Second"] }));
    plan = findPlan(s)!;
    expect(plan.steps).toEqual(["First", "Second"]);
    expect(plan.done).toBe(true);
    expect(blocksOf(s, "plan")).toHaveLength(1);
  });

  it("a plan_delta without plan_start still opens a plan", () => {
    const p = builder();
    const s = reduceAll([p({ type: "plan_delta", content: "1. A" })]);
    expect(findPlan(s)?.content).toBe("1. A");
  });

  it("plan_done placed in a later turn still completes the plan", () => {
    const p = builder();
    const s = reduceAll([p({ type: "plan_start", content: "1. A" }), p({ type: "plan_done", steps: ["A"] }, 1)]);
    expect(blocksOf(s, "plan")).toHaveLength(1);
    expect(findPlan(s)?.steps).toEqual(["A"]);
  });
});

describe("reasoning (thinking line)", () => {
  it("accumulates orchestrator reasoning at turn level; done text is authoritative", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "reasoning_start", reasoning: "" }, 1),
      p({ type: "reasoning_delta", reasoning: "Think " }, 1),
      p({ type: "reasoning_delta", reasoning: "more" }, 1),
    ]);
    let t = blocksOf(s, "thinking")[0] as ThinkingBlock;
    expect(t.text).toBe("Think more");
    expect(t.done).toBe(false);
    const s2 = reduce(s, p({ type: "reasoning_done", reasoning: "Think more." }, 1));
    t = blocksOf(s2, "thinking")[0];
    expect(t.text).toBe("Think more.");
    expect(t.done).toBe(true);
  });

  it("a second reasoning_start opens a second thinking line", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "reasoning_start", reasoning: "a" }, 1),
      p({ type: "reasoning_done" }, 1),
      p({ type: "reasoning_start", reasoning: "b" }, 1),
    ]);
    expect(blocksOf(s, "thinking").map((b) => b.text)).toEqual(["a", "b"]);
  });

  it("reasoning inside a lane becomes a lane step, not a thinking line", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "top_level_branching", num_parallel_branches: 1 }, 1),
      p({ type: "research_agent_start", task: "T" }, 1, 0),
      p({ type: "reasoning_start", reasoning: "" }, 1, 0, 0),
      p({ type: "reasoning_delta", reasoning: "hmm" }, 1, 0, 0),
      p({ type: "reasoning_done", reasoning: "" }, 1, 0, 0),
    ]);
    expect(blocksOf(s, "thinking")).toHaveLength(0);
    const lane = lanesOfTurn(s, 1)[0];
    expect(lane.steps).toHaveLength(1);
    expect(lane.steps[0]).toMatchObject({ kind: "reasoning", reasoning: "hmm", done: true });
  });
});

describe("lanes", () => {
  it("top_level_branching opens N pending lanes in its turn", () => {
    const p = builder();
    const s = reduceAll([p({ type: "top_level_branching", num_parallel_branches: 3 }, 1)]);
    const lanes = lanesOfTurn(s, 1);
    expect(lanes.map((l) => l.tab)).toEqual([0, 1, 2]);
    expect(lanes.every((l) => l.status === "pending")).toBe(true);
  });

  it("routes packets to lanes by tab_index and steps by sub_turn_index, interleaved", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "top_level_branching", num_parallel_branches: 2 }, 1),
      p({ type: "research_agent_start", task: "A task" }, 1, 0),
      p({ type: "research_agent_start", task: "B task" }, 1, 1),
      p({ type: "search_start", provider: "local" }, 1, 1, 0),
      p({ type: "search_start", provider: "local" }, 1, 0, 0),
      p({ type: "search_queries", queries: ["qa"] }, 1, 0, 0),
      p({ type: "search_queries", queries: ["qb1", "qb2"] }, 1, 1, 0),
      p({ type: "open_url_start" }, 1, 0, 1),
      p({ type: "open_url_urls", urls: ["https://x.org/a"] }, 1, 0, 1),
      p({ type: "search_documents", documents: [{ id: "d1", url: "https://x.org/a", title: "A", snippet: "s", source: "web" }] }, 1, 0, 0),
      p({ type: "open_url_documents", documents: [{ id: "d1", url: "https://x.org/a", title: "A", snippet: "s", source: "web" }] }, 1, 0, 1),
    ]);
    const [a, b] = lanesOfTurn(s, 1);
    expect(a.task).toBe("A task");
    expect(a.status).toBe("running");
    expect(a.steps.map((st) => [st.index, st.kind])).toEqual([[0, "search"], [1, "open_url"]]);
    expect(a.steps[0].queries).toEqual(["qa"]);
    expect(a.steps[0].documents.map((d) => d.id)).toEqual(["d1"]);
    expect(a.steps[1].urls).toEqual(["https://x.org/a"]);
    expect(b.task).toBe("B task");
    expect(b.steps).toHaveLength(1);
    expect(b.steps[0].queries).toEqual(["qb1", "qb2"]);
    expect(s.seenOrder).toEqual(["d1"]);
    expect(s.fetched).toEqual({ d1: true });
  });

  it("orders steps by sub_turn_index even when a later step starts first", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "top_level_branching", num_parallel_branches: 1 }, 1),
      p({ type: "open_url_start" }, 1, 0, 2),
      p({ type: "search_start", provider: "local" }, 1, 0, 1),
    ]);
    expect(lanesOfTurn(s, 1)[0].steps.map((st) => st.index)).toEqual([1, 2]);
  });

  it("section_end at the top of a lane marks it done; inside, it ends the step", () => {
    const p = builder();
    let s = reduceAll([
      p({ type: "top_level_branching", num_parallel_branches: 1 }, 1),
      p({ type: "research_agent_start", task: "T" }, 1),
      p({ type: "search_start", provider: "local" }, 1, 0, 0),
      p({ type: "section_end" }, 1, 0, 0),
    ]);
    let lane = lanesOfTurn(s, 1)[0];
    expect(lane.status).toBe("running");
    expect(lane.steps[0].done).toBe(true);
    s = reduce(s, p({ type: "section_end" }, 1, 0, null));
    lane = lanesOfTurn(s, 1)[0];
    expect(lane.status).toBe("done");
  });

  it("an error in a lane fails it, and a later section_end keeps it failed", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "top_level_branching", num_parallel_branches: 2 }, 1),
      p({ type: "research_agent_start", task: "T" }, 1, 1),
      p({ type: "error", message: "boom", recoverable: true }, 1, 1),
      p({ type: "section_end" }, 1, 1),
    ]);
    const lane = lanesOfTurn(s, 1)[1];
    expect(lane.status).toBe("failed");
    expect(lane.notices).toEqual([{ seq: 2, kind: "error", message: "boom", recoverable: true }]);
    expect(lanesOfTurn(s, 1)[0].status).toBe("pending");
    expect(blocksOf(s, "notice")).toHaveLength(0);
  });

  it("agent_hard_timeout times a lane out; the following error keeps it timed out", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "top_level_branching", num_parallel_branches: 1 }, 1),
      p({ type: "research_agent_start", task: "T" }, 1),
      p({ type: "degraded", level: "agent_force_report", detail: "12 min" }, 1),
      p({ type: "degraded", level: "agent_hard_timeout", detail: "30 min" }, 1),
      p({ type: "error", message: "timed out", recoverable: true }, 1),
      p({ type: "section_end" }, 1),
    ]);
    const lane = lanesOfTurn(s, 1)[0];
    expect(lane.status).toBe("timed_out");
    expect(lane.forced).toBe(true);
    expect(lane.notices.map((n) => n.level ?? n.kind)).toEqual(["agent_force_report", "agent_hard_timeout", "error"]);
  });

  it("agent_force_report alone leaves the lane running, then done", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "top_level_branching", num_parallel_branches: 1 }, 1),
      p({ type: "research_agent_start", task: "T" }, 1),
      p({ type: "degraded", level: "agent_force_report", detail: "12 min" }, 1),
    ]);
    expect(lanesOfTurn(s, 1)[0].status).toBe("running");
    expect(lanesOfTurn(reduce(s, p({ type: "section_end" }, 1)), 1)[0].status).toBe("done");
  });

  it("streams the intermediate report and its cited documents", () => {
    const p = builder();
    const d = { id: "d9", url: "corpus://python-reference/slots", title: "__slots__", snippet: "", source: "local" };
    const s = reduceAll([
      p({ type: "top_level_branching", num_parallel_branches: 1 }, 1),
      p({ type: "research_agent_start", task: "T" }, 1),
      p({ type: "intermediate_report_start", content: "" }, 1),
      p({ type: "intermediate_report_delta", content: "Fact " }, 1),
      p({ type: "intermediate_report_delta", content: "[1]." }, 1),
      p({ type: "intermediate_report_cited_docs", documents: [d] }, 1),
    ]);
    const lane = lanesOfTurn(s, 1)[0];
    expect(lane.report).toEqual({ content: "Fact [1].", documents: [d] });
    expect(s.documents.d9).toEqual(d);
  });

  it("lanes placed in the turn after their branching adopt it (no orphan pending lanes)", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "reasoning_start", reasoning: "x" }, 1),
      p({ type: "top_level_branching", num_parallel_branches: 3 }, 1),
      p({ type: "research_agent_start", task: "A" }, 2, 0),
      p({ type: "research_agent_start", task: "B" }, 2, 1),
    ]);
    expect(lanesOfTurn(s, 1)).toHaveLength(0);
    expect(s.turns[0].blocks.map((b) => b.kind)).toEqual(["thinking"]);
    expect(lanesOfTurn(s, 2).map((l) => [l.tab, l.task, l.status])).toEqual([
      [0, "A", "running"],
      [1, "B", "running"],
      [2, "", "pending"],
    ]);
  });

  it("a lane packet without a branching still opens a lane", () => {
    const p = builder();
    const s = reduceAll([p({ type: "research_agent_start", task: "solo" }, 4, 0)]);
    expect(lanesOfTurn(s, 4).map((l) => l.task)).toEqual(["solo"]);
  });

  it("stop marks lanes that never ended as stopped", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "top_level_branching", num_parallel_branches: 2 }, 1),
      p({ type: "research_agent_start", task: "T" }, 1, 0),
      p({ type: "section_end" }, 1, 0),
      p({ type: "research_agent_start", task: "U" }, 1, 1),
      p({ type: "stop", reason: "cancelled" }, 1),
    ]);
    expect(lanesOfTurn(s, 1).map((l) => l.status)).toEqual(["done", "stopped"]);
    expect(s.status).toBe("cancelled");
  });
});

describe("turn-level notices", () => {
  it("degraded and error outside lanes become notices where they happened", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "plan_start", content: "" }, 0),
      p({ type: "degraded", level: "orchestrator_force_report", detail: "no more cycles" }, 2),
      p({ type: "error", message: "no tool call on cycle 0", recoverable: false }, 3),
    ]);
    const notices = blocksOf(s, "notice");
    expect(notices.map((n) => n.notice.kind)).toEqual(["degraded", "error"]);
    expect(s.turns.map((t) => t.index)).toEqual([0, 2, 3]);
    expect(notices[1].notice.recoverable).toBe(false);
  });
});

describe("final report", () => {
  it("streams a draft and replaces it with the verified report", () => {
    const p = builder();
    const doc = { id: "d1", url: "https://a.org/x", title: "A", snippet: "sn", source: "web" };
    let s = reduceAll([
      p({ type: "message_start", final_documents: [doc] }, 3),
      p({ type: "message_delta", content: "Draft [1] and [9]" }, 3),
      p({ type: "citation_info", citation_number: 1, document_id: "d1", url: doc.url, title: "A" }, 3),
    ]);
    let m = lastMessage(s) as MessageBlock;
    expect(m.draft).toBe("Draft [1] and [9]");
    expect(m.report).toBeNull();
    expect(m.documents).toEqual([doc]);
    expect(s.citations[1]).toEqual({ number: 1, documentId: "d1", url: doc.url, title: "A" });
    s = reduce(s, p({ type: "section_end" }, 3));
    expect(lastMessage(s)?.done).toBe(true);
    const claim = { marker: "[1]", occurrence: 1, sentence: "Final.", reason: "not in the source" };
    s = reduce(
      s,
      p({ type: "report", report_id: "rep1", markdown: "Final [1].", sources: [{ ...doc, number: 1 }], removed_citations: [{ marker: "[9]", reason: "unverifiable" }], unsupported_claims: [claim] }, 3),
    );
    m = lastMessage(s)!;
    expect(blocksOf(s, "message")).toHaveLength(1);
    expect(m.report).toEqual({
      reportId: "rep1",
      title: "",
      summary: "",
      keyFindings: [],
      method: null,
      markdown: "Final [1].",
      sources: [{ ...doc, number: 1 }],
      removed: [{ marker: "[9]", reason: "unverifiable" }],
      unsupported: [claim],
      changes: null,
    });
    expect(s.reportId).toBe("rep1");
    expect(finalReport(s)?.markdown).toBe("Final [1].");
  });

  it("a report carries its title, summary, key findings and method note", () => {
    const p = builder();
    const method = {
      sources_found: 9, sources_read: 4, blocked_credibility: 1, blocked_ssrf: 0, failed_reads: 2,
      sources_cited: 3, citations_removed: 1, claims_checked: 12, claims_unsupported: 0, cycles_used: 2, max_cycles: 8,
      time_budget_s: 90, elapsed_s: 41.2, degraded: [], question_coverage: 0.8, on_subject_share: 0.6,
      uncited_subject_title: null, opening_cited: true, steps_planned: 4, steps_covered: 4,
      steps_empty: [], confidence: "medium" as const,
      confidence_reason: "1 citation failed verification and was removed.", text: "## How this report was made",
    };
    const s = reduceAll([
      p({
        type: "report", report_id: "r", markdown: "Body [1].", sources: [],
        title: "Descriptors", summary: "They win. Always.",
        key_findings: [{ text: "Data descriptors win.", citations: [1, 2] }], method,
      }, 2),
    ]);
    const report = lastMessage(s)?.report;
    expect(report?.title).toBe("Descriptors");
    expect(report?.summary).toBe("They win. Always.");
    expect(report?.keyFindings).toEqual([{ text: "Data descriptors win.", citations: [1, 2] }]);
    expect(report?.method?.confidence).toBe("medium");
  });

  it("a report placed in a later turn still replaces the earlier draft", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "message_start" }, 3),
      p({ type: "message_delta", content: "draft" }, 3),
      p({ type: "report", report_id: "r", markdown: "final", sources: [] }, 4),
    ]);
    expect(blocksOf(s, "message")).toHaveLength(1);
    expect(lastMessage(s)?.report?.markdown).toBe("final");
  });

  it("a report without any streamed draft still shows", () => {
    const p = builder();
    const s = reduceAll([p({ type: "report", report_id: "r", markdown: "only", sources: [] }, 2)]);
    expect(finalReport(s)?.markdown).toBe("only");
  });

  it("progress, usage (summed), summary and stop", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "progress", processed_tasks: 1, total_tasks: 3 }),
      p({ type: "usage", role: "plan", model: "m", input_tokens: 10, output_tokens: 2, cost_usd: 0.5 }),
      p({ type: "usage", role: "report", model: "m", input_tokens: 5, output_tokens: 3, cost_usd: 0.25 }),
      p({ type: "progress", processed_tasks: 2, total_tasks: 3 }),
      p({ type: "summary", elapsed_s: 12.5, sources_seen: 9, sources_fetched: 4, sources_cited: 3, input_tokens: 15, output_tokens: 5, cost_usd: 0.75, report_id: "rep", claims_checked: 7, claims_unsupported: 2 }),
      p({ type: "stop", reason: "completed" }),
    ]);
    expect(s.progress).toEqual({ processed: 2, total: 3 });
    expect(s.usage).toEqual({ inputTokens: 15, outputTokens: 5, costUsd: 0.75 });
    expect(s.summary).toMatchObject({ elapsedS: 12.5, sourcesSeen: 9, sourcesFetched: 4, sourcesCited: 3, reportId: "rep", claimsChecked: 7, claimsUnsupported: 2 });
    expect(s.reportId).toBe("rep");
    expect(s.status).toBe("completed");
  });
});

describe("clarification", () => {
  it("turns the streamed message into a clarification with questions", () => {
    const s = reduceAll(fixture("clarification"));
    const m = lastMessage(s)!;
    expect(m.role).toBe("clarification");
    expect(m.questions).toHaveLength(3);
    expect(m.draft).toContain("Before I start");
    expect(s.status).toBe("clarification");
    expect(findPlan(s)).toBeNull();
    expect(allLanes(s)).toHaveLength(0);
  });

  it("a clarification packet without a streamed message still makes a card", () => {
    const p = builder();
    const s = reduceAll([p({ type: "clarification", questions: ["Which?"] })]);
    expect(lastMessage(s)).toMatchObject({ role: "clarification", questions: ["Which?"] });
  });
});

describe("fixture: happy run, 3 lanes over 2 cycles", () => {
  const s = reduceAll(fixture("happy-3-lanes-2-cycles"));

  it("builds turns: plan, two lane cycles with thinking, final report", () => {
    expect(s.turns.map((t) => t.index)).toEqual([0, 1, 2, 3]);
    expect(s.turns[0].blocks.map((b) => b.kind)).toEqual(["plan"]);
    expect(s.turns[1].blocks.map((b) => b.kind)).toEqual(["thinking", "lanes"]);
    expect(s.turns[2].blocks.map((b) => b.kind)).toEqual(["thinking", "lanes"]);
    expect(s.turns[3].blocks.map((b) => b.kind)).toEqual(["message"]);
  });

  it("has 2 then 1 lanes, all done with tasks, steps and intermediate reports", () => {
    expect(lanesOfTurn(s, 1)).toHaveLength(2);
    expect(lanesOfTurn(s, 2)).toHaveLength(1);
    for (const lane of allLanes(s)) {
      expect(lane.status).toBe("done");
      expect(lane.task).not.toBe("");
      expect(lane.steps.length).toBeGreaterThan(0);
      expect(lane.steps.every((st) => st.done)).toBe(true);
      expect(lane.report?.content).toMatch(/\[1\]/);
    }
    expect(lanesOfTurn(s, 1)[0].steps.map((st) => st.kind)).toEqual(["search", "open_url", "reasoning"]);
  });

  it("ticks every plan step", () => {
    const plan = findPlan(s)!;
    expect(plan.steps).toHaveLength(3);
    expect(planStepStates(plan.steps!, allLanes(s))).toEqual(["done", "done", "done"]);
  });

  it("ends with the verified report, summary and completed status", () => {
    const m = lastMessage(s)!;
    expect(m.draft).toContain("An unverified claim [7]");
    expect(m.report?.markdown).not.toContain("[7]");
    expect(m.report?.removed).toHaveLength(1);
    expect(s.status).toBe("completed");
    expect(s.summary?.sourcesCited).toBe(4);
    expect(progressOf(s)).toEqual({ processed: 3, total: 3 });
  });

  it("lists cited sources first, then the rest seen", () => {
    const { cited, seen } = sourceLists(s);
    expect(cited.map((d) => d.number)).toEqual([1, 2, 3, 4]);
    expect(seen.length).toBe(s.seenOrder.length - 4);
    expect(seen.every((d) => !cited.some((c) => c.id === d.id))).toBe(true);
  });
});

describe("fixture: failed and timed-out lanes", () => {
  const s = reduceAll(fixture("failed-and-timed-out"));

  it("gives each lane its status", () => {
    expect(lanesOfTurn(s, 1).map((l) => l.status)).toEqual(["done", "failed", "timed_out"]);
  });

  it("ticks only the step whose lane finished", () => {
    const plan = findPlan(s)!;
    expect(planStepStates(plan.steps!, allLanes(s))).toEqual(["done", "todo", "todo"]);
  });

  it("shows orchestrator and report degradations where they happened", () => {
    const notices = s.turns.flatMap((t) => t.blocks.filter((b) => b.kind === "notice").map((b) => [t.index, (b as { notice: { level?: string } }).notice.level]));
    expect(notices).toEqual([
      [2, "orchestrator_force_report"],
      [3, "report_timeout"],
    ]);
    expect(finalReport(s)).not.toBeNull();
  });
});

describe("every fixture (including recorded engine streams)", () => {
  for (const [name, packets] of Object.entries(fixtures)) {
    describe(name, () => {
      const s = reduceAll(packets);
      it("has seq from 0, increasing by one, one run id", () => {
        packets.forEach((p, i) => expect(p.seq).toBe(i));
        expect(new Set(packets.map((p) => p.run_id)).size).toBe(1);
      });
      it("ends with exactly one stop, last", () => {
        expect(packets.filter((p) => p.obj.type === "stop")).toHaveLength(1);
        expect(packets[packets.length - 1].obj.type).toBe("stop");
        expect(s.status).not.toBe("running");
      });
      it("leaves nothing live after stop", () => {
        for (const lane of allLanes(s)) expect(["done", "failed", "timed_out", "stopped"]).toContain(lane.status);
        for (const t of s.turns)
          for (const b of t.blocks) if (b.kind !== "lanes" && b.kind !== "notice") expect(b.done).toBe(true);
      });
      it("is idempotent under full replay and under a resume at every tenth packet", () => {
        expect(reduceAll(packets, s)).toBe(s);
        for (let cut = 1; cut < packets.length; cut += 10) {
          const resumed = reduceAll(packets.slice(Math.max(0, cut - 3)), reduceAll(packets.slice(0, cut)));
          expect(resumed).toEqual(s);
        }
      });
    });
  }
});

describe("plan review", () => {
  it("opens a review on the plan block and closes it with the outcome and the steps used", () => {
    const p = builder();
    let s = reduceAll([
      p({ type: "plan_start", content: "" }, 1),
      p({ type: "plan_done", steps: ["a", "b"] }, 1),
      p({ type: "plan_review", steps: ["a", "b"], round: 1, max_rounds: 3 }, 1),
    ]);
    expect(findPlan(s)?.review).toEqual({ open: true, round: 1, maxRounds: 3, outcome: null });
    s = reduce(s, p({ type: "plan_reviewed", outcome: "edited", steps: ["b", "c"] }, 1));
    expect(findPlan(s)?.review).toEqual({ open: false, round: 1, maxRounds: 3, outcome: "edited" });
    expect(findPlan(s)?.steps).toEqual(["b", "c"]);
  });

  it("a revision keeps the old plan as it was and reviews the new one", () => {
    const p = builder();
    const s = reduceAll([
      p({ type: "plan_done", steps: ["a"] }, 1),
      p({ type: "plan_review", steps: ["a"], round: 1, max_rounds: 2 }, 1),
      p({ type: "plan_reviewed", outcome: "revising", steps: ["a"] }, 1),
      p({ type: "plan_start", content: "" }, 2),
      p({ type: "plan_done", steps: ["a2"] }, 2),
      p({ type: "plan_review", steps: ["a2"], round: 2, max_rounds: 2 }, 2),
    ]);
    const plans = s.turns.flatMap((t) => t.blocks).filter((b) => b.kind === "plan");
    expect(plans.map((b) => (b.kind === "plan" ? [b.steps, b.review?.outcome, b.review?.open] : null))).toEqual([
      [["a"], "revising", false],
      [["a2"], null, true],
    ]);
  });
});
