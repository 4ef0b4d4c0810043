// Research-agent lanes: finding and replacing a lane and its steps, and the packets that
// happen inside one (agent start, tool steps, the intermediate report).

import type { Document, ObjOf, Placement } from "../types";
import { lastIndexOf, mergeDocs, registerDocuments, withTurn } from "./blocks";
import type { Lane, LanesBlock, RunState, Step, StepKind, Turn } from "./state";

export function newLane(tab: number): Lane {
  return { tab, task: "", status: "pending", steps: [], report: null, notices: [], forced: false };
}

export function isTerminal(l: Lane): boolean {
  return l.status === "done" || l.status === "failed" || l.status === "timed_out" || l.status === "stopped";
}

/** Any activity in a pending lane means its agent has started. */
export function running(l: Lane): Lane {
  return l.status === "pending" ? { ...l, status: "running" } : l;
}

function lanesBlockIndex(t: Turn): number {
  return lastIndexOf(t.blocks, "lanes", false);
}

/** The lane at `place.tab_index` of this turn, if a branching opened it. */
export function findLane(s: RunState, place: Placement): Lane | null {
  const t = s.turns.find((x) => x.index === place.turn_index);
  if (!t) return null;
  const i = lanesBlockIndex(t);
  if (i < 0) return null;
  return (t.blocks[i] as LanesBlock).lanes.find((l) => l.tab === place.tab_index) ?? null;
}

/**
 * A branching whose lanes never started, placed in an earlier turn than the lane packets
 * that follow it: take it out and return how many lanes it announced. (Keeps the timeline
 * right whether the engine puts `top_level_branching` in the lanes' turn or the one before.)
 */
function adoptOrphanBranching(s: RunState, turnIndex: number): { s: RunState; expected: number } {
  for (let ti = s.turns.length - 1; ti >= 0; ti--) {
    const t = s.turns[ti];
    if (t.index >= turnIndex) continue;
    const bi = lanesBlockIndex(t);
    if (bi < 0) continue;
    const lb = t.blocks[bi] as LanesBlock;
    if (!lb.lanes.every((l) => l.status === "pending" && !l.task && !l.steps.length)) return { s, expected: 0 };
    const blocks = t.blocks.filter((_, j) => j !== bi);
    const turns = blocks.length ? s.turns.map((x, j) => (j === ti ? { ...x, blocks } : x)) : s.turns.filter((_, j) => j !== ti);
    return { s: { ...s, turns }, expected: lb.expected };
  }
  return { s, expected: 0 };
}

/** Replace the lane at `place`, opening a lanes block / lane if the branching was missed. */
export function withLane(state: RunState, place: Placement, fn: (l: Lane) => Lane): RunState {
  let s = state;
  let adopted = 0;
  const here = s.turns.find((t) => t.index === place.turn_index);
  if (!here || lanesBlockIndex(here) < 0) {
    const r = adoptOrphanBranching(s, place.turn_index);
    s = r.s;
    adopted = r.expected;
  }
  return withTurn(s, place.turn_index, (t) => {
    let blocks = t.blocks;
    let i = lanesBlockIndex(t);
    if (i < 0) {
      const n = Math.max(adopted, place.tab_index + 1);
      const lanes = adopted ? Array.from({ length: adopted }, (_, tab) => newLane(tab)) : [];
      blocks = [...blocks, { kind: "lanes", expected: n, lanes }];
      i = blocks.length - 1;
    } else {
      blocks = blocks.slice();
    }
    const lb = blocks[i] as LanesBlock;
    const lanes = lb.lanes.slice();
    let li = lanes.findIndex((l) => l.tab === place.tab_index);
    if (li < 0) {
      lanes.push(newLane(place.tab_index));
      lanes.sort((a, b) => a.tab - b.tab);
      li = lanes.findIndex((l) => l.tab === place.tab_index);
    }
    lanes[li] = fn(lanes[li]);
    blocks[i] = { ...lb, lanes, expected: Math.max(lb.expected, lanes.length) };
    return { ...t, blocks };
  });
}

function newStep(index: number, kind: StepKind): Step {
  return { index, kind, queries: [], documents: [], urls: [], reasoning: "", done: false };
}

/**
 * Replace the step of `place.sub_turn_index`. A lane packet without a sub-turn (not expected
 * from the engine, but tolerated) attaches to the lane's latest step of the same kind, or
 * opens a new one when `startsNew`.
 */
export function withStep(lane: Lane, place: Placement, kind: StepKind, fn: (st: Step) => Step, startsNew: boolean): Lane {
  const steps = lane.steps.slice();
  let i: number;
  if (place.sub_turn_index !== null) {
    i = steps.findIndex((st) => st.index === place.sub_turn_index);
    if (i < 0) {
      steps.push(newStep(place.sub_turn_index, kind));
      steps.sort((a, b) => a.index - b.index);
      i = steps.findIndex((st) => st.index === place.sub_turn_index);
    }
  } else {
    i = -1;
    if (!startsNew) {
      for (let j = steps.length - 1; j >= 0; j--) {
        if (steps[j].kind === kind) {
          i = j;
          break;
        }
      }
    }
    if (i < 0) {
      const next = steps.reduce((m, st) => Math.max(m, st.index), -1) + 1;
      steps.push(newStep(next, kind));
      i = steps.length - 1;
    }
  }
  const cur = steps[i];
  // A step created by a later packet (e.g. queries before start) adopts the real kind.
  const typed = cur.kind === "other" ? { ...cur, kind } : cur;
  steps[i] = fn(typed);
  return { ...lane, steps };
}

// ---------------------------------------------------------------- tool steps

export type ToolStepType =
  | "search_start"
  | "search_queries"
  | "search_documents"
  | "open_url_start"
  | "open_url_urls"
  | "open_url_documents";

/** How one tool-step packet changes its step. Search and open_url have the same three phases. */
export interface ToolStepRule<T extends ToolStepType> {
  kind: "search" | "open_url";
  /** The packet opens a new step (when it comes without a sub-turn). */
  opens?: true;
  apply?: (st: Step, obj: ObjOf<T>) => Step;
  /** The step's documents, which end it; they join the run's registry. */
  documents?: (obj: ObjOf<T>) => Document[] | undefined;
  /** Its documents' pages were read (open_url), not just listed (search). */
  fetched?: true;
}

export const TOOL_STEPS: { [T in ToolStepType]: ToolStepRule<T> } = {
  search_start: { kind: "search", opens: true, apply: (st, o) => ({ ...st, provider: o.provider }) },
  search_queries: { kind: "search", apply: (st, o) => ({ ...st, queries: [...st.queries, ...(o.queries ?? [])] }) },
  search_documents: { kind: "search", documents: (o) => o.documents },
  open_url_start: { kind: "open_url", opens: true },
  open_url_urls: { kind: "open_url", apply: (st, o) => ({ ...st, urls: [...st.urls, ...(o.urls ?? [])] }) },
  open_url_documents: { kind: "open_url", documents: (o) => o.documents, fetched: true },
};

/** The handler for one tool-step packet type, following its rule in TOOL_STEPS. */
export function toolStep<T extends ToolStepType>(type: T): (s: RunState, obj: ObjOf<T>, place: Placement) => RunState {
  const rule: ToolStepRule<T> = TOOL_STEPS[type];
  return (s, obj, place) => {
    const docs = rule.documents?.(obj);
    const step = (st: Step): Step => {
      const next = rule.apply ? rule.apply(st, obj) : st;
      return rule.documents ? { ...next, documents: mergeDocs(next.documents, docs), done: true } : next;
    };
    return withLane(registerDocuments(s, docs, !!rule.fetched), place, (l) => withStep(running(l), place, rule.kind, step, !!rule.opens));
  };
}

// ---------------------------------------------------------------- agent start and report

export function reduceAgentStart(s: RunState, place: Placement, obj: ObjOf<"research_agent_start">): RunState {
  return withLane(s, place, (l) => ({ ...l, task: obj.task ?? "", status: isTerminal(l) ? l.status : "running" }));
}

export function reduceIntermediateReport(
  s: RunState,
  place: Placement,
  obj: ObjOf<"intermediate_report_start"> | ObjOf<"intermediate_report_delta"> | ObjOf<"intermediate_report_cited_docs">,
): RunState {
  if (obj.type === "intermediate_report_cited_docs") {
    return withLane(registerDocuments(s, obj.documents, false), place, (l) => ({
      ...l,
      report: { content: l.report?.content ?? "", documents: mergeDocs(l.report?.documents ?? [], obj.documents) },
    }));
  }
  const before = (l: Lane) => (obj.type === "intermediate_report_delta" ? l.report?.content ?? "" : "");
  return withLane(s, place, (l) => ({
    ...running(l),
    report: { content: before(l) + (obj.content ?? ""), documents: l.report?.documents ?? [] },
  }));
}
