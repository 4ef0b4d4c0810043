// The pure reducer: (RunState, Packet) -> RunState. No I/O, no clock, no mutation of its
// inputs, so a timeline rebuilt from a replay is identical to one built live.

import type { Document, ObjOf, Packet, PacketObj, Placement } from "../types";
import type {
  Block,
  Lane,
  LanesBlock,
  MessageBlock,
  Notice,
  PlanBlock,
  RunState,
  Step,
  StepKind,
  ThinkingBlock,
  Turn,
} from "./state";
import { initialRunState } from "./state";

export { initialRunState };

/** Apply every packet in order (for replays and tests). */
export function reduceAll(packets: Iterable<Packet>, state: RunState = initialRunState()): RunState {
  let s = state;
  for (const p of packets) s = reduce(s, p);
  return s;
}

const LANE_TYPES = new Set<PacketObj["type"]>([
  "research_agent_start",
  "search_start",
  "search_queries",
  "search_documents",
  "open_url_start",
  "open_url_urls",
  "open_url_documents",
  "intermediate_report_start",
  "intermediate_report_delta",
  "intermediate_report_cited_docs",
]);

export function reduce(state: RunState, packet: Packet): RunState {
  if (!packet || typeof packet.seq !== "number" || !packet.obj || typeof packet.obj.type !== "string") {
    return state;
  }
  // SSE resumes "after Last-Event-ID" and the server sends in seq order, so anything at or
  // below the high-water mark has been applied already.
  if (packet.seq <= state.lastSeq) return state;
  if (state.runId !== null && packet.run_id && packet.run_id !== state.runId) return state;

  const s: RunState = { ...state, lastSeq: packet.seq, runId: state.runId ?? packet.run_id ?? null };
  const place = normalisePlacement(packet.placement);
  const obj = packet.obj;

  switch (obj.type) {
    case "run_start":
      return {
        ...s,
        sessionId: obj.session_id ?? null,
        question: obj.question ?? "",
        mode: obj.mode ?? null,
        models: obj.models ?? {},
        timeBudgetS: typeof obj.time_budget_s === "number" && obj.time_budget_s > 0 ? obj.time_budget_s : null,
        sources: Array.isArray(obj.sources) ? obj.sources.filter((n): n is string => typeof n === "string") : [],
      };

    case "plan_start":
      return pushBlock(s, place, { kind: "plan", content: obj.content ?? "", steps: null, done: false });
    case "plan_delta":
      return updateOpenBlock(s, place, "plan", (b) => ({ ...b, content: b.content + (obj.content ?? "") }), () => ({
        kind: "plan",
        content: obj.content ?? "",
        steps: null,
        done: false,
      }));
    case "plan_done":
      return updateLastBlockAnyTurn(
        s,
        place,
        "plan",
        (b) => ({ ...b, steps: [...(obj.steps ?? [])], done: true }),
        () => ({ kind: "plan", content: "", steps: [...(obj.steps ?? [])], done: true }),
      );

    case "reasoning_start":
    case "reasoning_delta":
    case "reasoning_done":
      return reduceReasoning(s, place, obj);

    case "top_level_branching": {
      const n = Math.max(1, Math.floor(obj.num_parallel_branches || 1));
      const lanes: Lane[] = Array.from({ length: n }, (_, tab) => newLane(tab));
      return pushBlock(s, place, { kind: "lanes", expected: n, lanes });
    }

    case "message_start":
      return pushBlock(s, place, newMessage(obj.final_documents ?? []));
    case "message_delta":
      return updateOpenBlock(
        s,
        place,
        "message",
        (b) => ({ ...b, draft: b.draft + (obj.content ?? "") }),
        () => ({ ...newMessage([]), draft: obj.content ?? "" }),
      );

    case "clarification":
      return {
        ...updateLastBlockAnyTurn(
          s,
          place,
          "message",
          (b) => ({ ...b, role: "clarification", questions: [...(obj.questions ?? [])], done: true }),
          () => ({ ...newMessage([]), role: "clarification", questions: [...(obj.questions ?? [])], done: true }),
        ),
      };

    case "report": {
      const report = {
        reportId: obj.report_id,
        markdown: obj.markdown ?? "",
        sources: [...(obj.sources ?? [])].sort((a, b) => a.number - b.number),
        removed: [...(obj.removed_citations ?? [])],
        unsupported: [...(obj.unsupported_claims ?? [])],
      };
      const withDocs = registerDocuments(s, report.sources, false);
      const next = updateLastBlockAnyTurn(
        withDocs,
        place,
        "message",
        (b) => ({ ...b, role: "report", report, done: true }),
        () => ({ ...newMessage([]), report, done: true }),
      );
      return { ...next, reportId: obj.report_id ?? next.reportId };
    }

    case "citation_info":
      return {
        ...s,
        citations: {
          ...s.citations,
          [obj.citation_number]: {
            number: obj.citation_number,
            documentId: obj.document_id,
            url: obj.url,
            title: obj.title,
          },
        },
      };

    case "progress":
      return { ...s, progress: { processed: obj.processed_tasks ?? 0, total: obj.total_tasks ?? 0 } };

    case "usage":
      return {
        ...s,
        usage: {
          inputTokens: s.usage.inputTokens + (obj.input_tokens ?? 0),
          outputTokens: s.usage.outputTokens + (obj.output_tokens ?? 0),
          costUsd: s.usage.costUsd + (obj.cost_usd ?? 0),
        },
      };

    case "summary":
      return {
        ...s,
        summary: {
          elapsedS: obj.elapsed_s ?? 0,
          sourcesSeen: obj.sources_seen ?? 0,
          sourcesFetched: obj.sources_fetched ?? 0,
          sourcesCited: obj.sources_cited ?? 0,
          inputTokens: obj.input_tokens ?? 0,
          outputTokens: obj.output_tokens ?? 0,
          costUsd: obj.cost_usd ?? 0,
          reportId: obj.report_id ?? null,
          claimsChecked: obj.claims_checked ?? 0,
          claimsUnsupported: obj.claims_unsupported ?? 0,
        },
        reportId: obj.report_id ?? s.reportId,
      };

    case "degraded":
    case "error":
      return reduceNotice(s, place, packet.seq, obj);

    case "section_end":
      return reduceSectionEnd(s, place);

    case "stop":
      return finishRun({ ...s, status: obj.reason ?? "completed" });

    default:
      if (LANE_TYPES.has(obj.type)) return reduceLane(s, place, obj);
      // Unknown types (a newer server) are skipped; the seq still counts as applied.
      return s;
  }
}

// ---------------------------------------------------------------- placement & turns

function normalisePlacement(p: Partial<Placement> | undefined): Placement {
  return {
    turn_index: typeof p?.turn_index === "number" ? p.turn_index : 0,
    tab_index: typeof p?.tab_index === "number" ? p.tab_index : 0,
    sub_turn_index: typeof p?.sub_turn_index === "number" ? p.sub_turn_index : null,
  };
}

/** Return the state with turn `index` replaced by `fn(turn)`; turns stay sorted by index. */
function withTurn(s: RunState, index: number, fn: (t: Turn) => Turn): RunState {
  const at = s.turns.findIndex((t) => t.index === index);
  if (at >= 0) {
    const turns = s.turns.slice();
    turns[at] = fn(turns[at]);
    return { ...s, turns };
  }
  const turns = [...s.turns, fn({ index, blocks: [] })].sort((a, b) => a.index - b.index);
  return { ...s, turns };
}

function pushBlock(s: RunState, place: Placement, block: Block): RunState {
  return withTurn(s, place.turn_index, (t) => ({ ...t, blocks: [...t.blocks, block] }));
}

type BlockOf<K extends Block["kind"]> = Extract<Block, { kind: K }>;

function lastIndexOf<K extends Block["kind"]>(blocks: Block[], kind: K, openOnly: boolean): number {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i];
    if (b.kind === kind && (!openOnly || !("done" in b) || !b.done)) return i;
  }
  return -1;
}

/** Update the latest still-open block of `kind` in this turn, or append `create()`. */
function updateOpenBlock<K extends Block["kind"]>(
  s: RunState,
  place: Placement,
  kind: K,
  fn: (b: BlockOf<K>) => BlockOf<K>,
  create: () => BlockOf<K>,
): RunState {
  return withTurn(s, place.turn_index, (t) => {
    const i = lastIndexOf(t.blocks, kind, true);
    if (i < 0) return { ...t, blocks: [...t.blocks, create()] };
    const blocks = t.blocks.slice();
    blocks[i] = fn(blocks[i] as BlockOf<K>);
    return { ...t, blocks };
  });
}

/**
 * Update the latest block of `kind` in this turn or, failing that, in any earlier turn
 * (e.g. `report` may be placed after the streamed message), or append `create()` here.
 */
function updateLastBlockAnyTurn<K extends Block["kind"]>(
  s: RunState,
  place: Placement,
  kind: K,
  fn: (b: BlockOf<K>) => BlockOf<K>,
  create: () => BlockOf<K>,
): RunState {
  const order = s.turns
    .filter((t) => t.index <= place.turn_index)
    .sort((a, b) => b.index - a.index);
  for (const t of order) {
    const i = lastIndexOf(t.blocks, kind, false);
    if (i >= 0) {
      return withTurn(s, t.index, (turn) => {
        const blocks = turn.blocks.slice();
        blocks[i] = fn(blocks[i] as BlockOf<K>);
        return { ...turn, blocks };
      });
    }
  }
  return pushBlock(s, place, create());
}

function newMessage(documents: Document[]): MessageBlock {
  return { kind: "message", role: "report", draft: "", documents: [...documents], questions: [], report: null, done: false };
}

// ---------------------------------------------------------------- lanes

function newLane(tab: number): Lane {
  return { tab, task: "", status: "pending", steps: [], report: null, notices: [], forced: false };
}

function lanesBlockIndex(t: Turn): number {
  return lastIndexOf(t.blocks, "lanes", false);
}

/** The lane at `place.tab_index` of this turn, if a branching opened it. */
function findLane(s: RunState, place: Placement): Lane | null {
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
function withLane(state: RunState, place: Placement, fn: (l: Lane) => Lane): RunState {
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

function isTerminal(l: Lane): boolean {
  return l.status === "done" || l.status === "failed" || l.status === "timed_out" || l.status === "stopped";
}

function newStep(index: number, kind: StepKind): Step {
  return { index, kind, queries: [], documents: [], urls: [], reasoning: "", done: false };
}

/**
 * Replace the step of `place.sub_turn_index`. A lane packet without a sub-turn (not expected
 * from the engine, but tolerated) attaches to the lane's latest step of the same kind.
 */
function withStep(lane: Lane, place: Placement, kind: StepKind, fn: (st: Step) => Step, startsNew: boolean): Lane {
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
      for (let j = steps.length - 1; j >= 0; j--) if (steps[j].kind === kind) { i = j; break; }
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

function mergeDocs(into: Document[], docs: Document[]): Document[] {
  const seen = new Set(into.map((d) => d.id));
  const out = into.slice();
  for (const d of docs ?? []) {
    if (d && !seen.has(d.id)) {
      seen.add(d.id);
      out.push(d);
    }
  }
  return out;
}

function registerDocuments(s: RunState, docs: Document[], fetched: boolean): RunState {
  if (!docs?.length) return s;
  let documents = s.documents;
  let seenOrder = s.seenOrder;
  let fetchedMap = s.fetched;
  for (const d of docs) {
    if (!d || typeof d.id !== "string") continue;
    if (!(d.id in documents)) {
      if (documents === s.documents) documents = { ...documents };
      if (seenOrder === s.seenOrder) seenOrder = seenOrder.slice();
      documents[d.id] = d;
      seenOrder.push(d.id);
    }
    if (fetched && !fetchedMap[d.id]) {
      if (fetchedMap === s.fetched) fetchedMap = { ...fetchedMap };
      fetchedMap[d.id] = true;
    }
  }
  return { ...s, documents, seenOrder, fetched: fetchedMap };
}

function reduceLane(s: RunState, place: Placement, obj: PacketObj): RunState {
  switch (obj.type) {
    case "research_agent_start":
      return withLane(s, place, (l) => ({ ...l, task: obj.task ?? "", status: isTerminal(l) ? l.status : "running" }));
    case "search_start":
      return withLane(s, place, (l) =>
        withStep(running(l), place, "search", (st) => ({ ...st, provider: obj.provider }), true),
      );
    case "search_queries":
      return withLane(s, place, (l) =>
        withStep(running(l), place, "search", (st) => ({ ...st, queries: [...st.queries, ...(obj.queries ?? [])] }), false),
      );
    case "search_documents":
      return withLane(registerDocuments(s, obj.documents, false), place, (l) =>
        withStep(running(l), place, "search", (st) => ({ ...st, documents: mergeDocs(st.documents, obj.documents), done: true }), false),
      );
    case "open_url_start":
      return withLane(s, place, (l) => withStep(running(l), place, "open_url", (st) => st, true));
    case "open_url_urls":
      return withLane(s, place, (l) =>
        withStep(running(l), place, "open_url", (st) => ({ ...st, urls: [...st.urls, ...(obj.urls ?? [])] }), false),
      );
    case "open_url_documents":
      return withLane(registerDocuments(s, obj.documents, true), place, (l) =>
        withStep(running(l), place, "open_url", (st) => ({ ...st, documents: mergeDocs(st.documents, obj.documents), done: true }), false),
      );
    case "intermediate_report_start":
      return withLane(s, place, (l) => ({
        ...running(l),
        report: { content: obj.content ?? "", documents: l.report?.documents ?? [] },
      }));
    case "intermediate_report_delta":
      return withLane(s, place, (l) => ({
        ...running(l),
        report: { content: (l.report?.content ?? "") + (obj.content ?? ""), documents: l.report?.documents ?? [] },
      }));
    case "intermediate_report_cited_docs":
      return withLane(registerDocuments(s, obj.documents, false), place, (l) => ({
        ...l,
        report: { content: l.report?.content ?? "", documents: mergeDocs(l.report?.documents ?? [], obj.documents) },
      }));
    default:
      return s;
  }
}

/** Any activity in a pending lane means its agent has started. */
function running(l: Lane): Lane {
  return l.status === "pending" ? { ...l, status: "running" } : l;
}

// ---------------------------------------------------------------- reasoning

type ReasoningObj = ObjOf<"reasoning_start"> | ObjOf<"reasoning_delta"> | ObjOf<"reasoning_done">;

function reduceReasoning(s: RunState, place: Placement, obj: ReasoningObj): RunState {
  const text = obj.reasoning ?? "";
  const lane = findLane(s, place);
  // Inside an agent (a sub-turn, or the top of a live lane) reasoning is one of its steps;
  // otherwise it is the orchestrator's "thinking" line between cycles.
  if (lane && (place.sub_turn_index !== null || !isTerminal(lane))) {
    return withLane(s, place, (l) =>
      withStep(
        running(l),
        place,
        "reasoning",
        (st) => {
          if (obj.type === "reasoning_start") return { ...st, reasoning: st.reasoning + text };
          if (obj.type === "reasoning_delta") return { ...st, reasoning: st.reasoning + text };
          return { ...st, reasoning: text || st.reasoning, done: true };
        },
        obj.type === "reasoning_start",
      ),
    );
  }
  if (obj.type === "reasoning_start") {
    return pushBlock(s, place, { kind: "thinking", text, done: false } satisfies ThinkingBlock);
  }
  if (obj.type === "reasoning_delta") {
    return updateOpenBlock(s, place, "thinking", (b) => ({ ...b, text: b.text + text }), () => ({
      kind: "thinking",
      text,
      done: false,
    }));
  }
  // reasoning_done may carry the whole text; it is authoritative when present.
  return updateOpenBlock(s, place, "thinking", (b) => ({ ...b, text: text || b.text, done: true }), () => ({
    kind: "thinking",
    text,
    done: true,
  }));
}

// ---------------------------------------------------------------- notices, ends

function reduceNotice(s: RunState, place: Placement, seq: number, obj: ObjOf<"degraded"> | ObjOf<"error">): RunState {
  const notice: Notice =
    obj.type === "error"
      ? { seq, kind: "error", message: obj.message ?? "error", recoverable: !!obj.recoverable }
      : { seq, kind: "degraded", level: obj.level, message: obj.detail ?? "" };
  const lane = findLane(s, place);
  if (lane) {
    return withLane(s, place, (l) => {
      const notices = [...l.notices, notice];
      // A timed-out agent's lane also ends with an error; "timed out" is the more precise status.
      if (obj.type === "error") return { ...l, notices, status: l.status === "timed_out" ? l.status : "failed" };
      if (obj.level === "agent_hard_timeout") return { ...l, notices, status: "timed_out" };
      if (obj.level === "agent_force_report") return { ...l, notices, forced: true };
      return { ...l, notices };
    });
  }
  return pushBlock(s, place, { kind: "notice", notice });
}

function reduceSectionEnd(s: RunState, place: Placement): RunState {
  const lane = findLane(s, place);
  if (lane) {
    if (place.sub_turn_index !== null) {
      return withLane(s, place, (l) => {
        const i = l.steps.findIndex((st) => st.index === place.sub_turn_index);
        if (i < 0) return l;
        const steps = l.steps.slice();
        steps[i] = { ...steps[i], done: true };
        return { ...l, steps };
      });
    }
    // The top of a lane ends: done, unless it already failed or timed out.
    return withLane(s, place, (l) => ({
      ...l,
      status: isTerminal(l) ? l.status : "done",
      steps: l.steps.map((st) => (st.done ? st : { ...st, done: true })),
    }));
  }
  // Outside lanes a section_end closes the turn's latest open block (plan, thinking, message).
  return withTurn(s, place.turn_index, (t) => {
    for (let i = t.blocks.length - 1; i >= 0; i--) {
      const b = t.blocks[i];
      if ((b.kind === "plan" || b.kind === "thinking" || b.kind === "message") && !b.done) {
        const blocks = t.blocks.slice();
        blocks[i] = { ...b, done: true } as PlanBlock | ThinkingBlock | MessageBlock;
        return { ...t, blocks };
      }
    }
    return t;
  });
}

/** On `stop`, nothing is live any more: close open blocks, mark unfinished lanes stopped. */
function finishRun(s: RunState): RunState {
  const turns = s.turns.map((t) => {
    let changed = false;
    const blocks = t.blocks.map((b): Block => {
      if (b.kind === "lanes") {
        if (b.lanes.every(isTerminal)) return b;
        changed = true;
        return {
          ...b,
          lanes: b.lanes.map((l) => (isTerminal(l) ? l : { ...l, status: "stopped" })),
        };
      }
      if (b.kind !== "notice" && !b.done) {
        changed = true;
        return { ...b, done: true };
      }
      return b;
    });
    return changed ? { ...t, blocks } : t;
  });
  return { ...s, turns };
}
