// The pure reducer: (RunState, Packet) -> RunState. No I/O, no clock, no mutation of its
// inputs, so a timeline rebuilt from a replay is identical to one built live. `reduce` checks
// the packet and hands it to the handler its type names in HANDLERS.

import type { ObjOf, Packet, PacketType, Placement } from "../types";
import {
  newMessage,
  normalisePlacement,
  pushBlock,
  registerDocuments,
  replaceAt,
  updateLastBlockAnyTurn,
  updateOpenBlock,
  withTurn,
} from "./blocks";
import {
  findLane,
  isTerminal,
  newLane,
  reduceAgentStart,
  reduceIntermediateReport,
  toolStep,
  running,
  withLane,
  withStep,
} from "./lanes";
import type { Block, Lane, MessageBlock, Notice, PlanBlock, PlanReviewState, RunState, ThinkingBlock, VerifiedReport } from "./state";
import { initialRunState } from "./state";

export { initialRunState };

/** Apply every packet in order (for replays and tests). */
export function reduceAll(packets: Iterable<Packet>, state: RunState = initialRunState()): RunState {
  let s = state;
  for (const p of packets) s = reduce(s, p);
  return s;
}

export function reduce(state: RunState, packet: Packet): RunState {
  if (!packet || typeof packet.seq !== "number" || !packet.obj || typeof packet.obj.type !== "string") {
    return state;
  }
  // SSE resumes "after Last-Event-ID" and the server sends in seq order, so anything at or
  // below the high-water mark has been applied already.
  if (packet.seq <= state.lastSeq) return state;
  if (state.runId !== null && packet.run_id && packet.run_id !== state.runId) return state;

  const s: RunState = { ...state, lastSeq: packet.seq, runId: state.runId ?? packet.run_id ?? null };
  const handler = HANDLERS[packet.obj.type] as Handler<PacketType> | undefined;
  // Unknown types (a newer server) are skipped; the seq still counts as applied.
  return handler ? handler(s, packet.obj, normalisePlacement(packet.placement), packet.seq) : s;
}

type Handler<T extends PacketType> = (s: RunState, obj: ObjOf<T>, place: Placement, seq: number) => RunState;

/** Which handler applies each packet type; types not named here change nothing. */
export const HANDLERS: { [T in PacketType]?: Handler<T> } = {
  run_start: reduceRunStart,
  plan_start: (s, obj, place) => pushBlock(s, place, newPlan(obj.content ?? "")),
  plan_delta: (s, obj, place) =>
    updateOpenBlock(s, place, "plan", (b) => ({ ...b, content: b.content + (obj.content ?? "") }), () => newPlan(obj.content ?? "")),
  plan_done: (s, obj, place) =>
    updateLastBlockAnyTurn(
      s,
      place,
      "plan",
      (b) => ({ ...b, steps: [...(obj.steps ?? [])], done: true }),
      () => ({ ...newPlan(""), steps: [...(obj.steps ?? [])], done: true }),
    ),
  plan_review: reducePlanReview,
  plan_reviewed: reducePlanReviewed,
  reasoning_start: reduceReasoning,
  reasoning_delta: reduceReasoning,
  reasoning_done: reduceReasoning,
  top_level_branching: (s, obj, place) => {
    const n = Math.max(1, Math.floor(obj.num_parallel_branches || 1));
    const lanes: Lane[] = Array.from({ length: n }, (_, tab) => newLane(tab));
    return pushBlock(s, place, { kind: "lanes", expected: n, lanes });
  },
  research_agent_start: (s, obj, place) => reduceAgentStart(s, place, obj),
  search_start: toolStep("search_start"),
  search_queries: toolStep("search_queries"),
  search_documents: toolStep("search_documents"),
  open_url_start: toolStep("open_url_start"),
  open_url_urls: toolStep("open_url_urls"),
  open_url_documents: toolStep("open_url_documents"),
  intermediate_report_start: (s, obj, place) => reduceIntermediateReport(s, place, obj),
  intermediate_report_delta: (s, obj, place) => reduceIntermediateReport(s, place, obj),
  intermediate_report_cited_docs: (s, obj, place) => reduceIntermediateReport(s, place, obj),
  message_start: (s, obj, place) => pushBlock(s, place, newMessage(obj.final_documents ?? [])),
  message_delta: (s, obj, place) =>
    updateOpenBlock(
      s,
      place,
      "message",
      (b) => ({ ...b, draft: b.draft + (obj.content ?? "") }),
      () => ({ ...newMessage([]), draft: obj.content ?? "" }),
    ),
  clarification: (s, obj, place) => {
    const asked: Pick<MessageBlock, "role" | "questions" | "done"> = { role: "clarification", questions: [...(obj.questions ?? [])], done: true };
    return updateLastBlockAnyTurn(s, place, "message", (b) => ({ ...b, ...asked }), () => ({ ...newMessage([]), ...asked }));
  },
  report: reduceReport,
  citation_info: (s, obj) => ({
    ...s,
    citations: {
      ...s.citations,
      [obj.citation_number]: { number: obj.citation_number, documentId: obj.document_id, url: obj.url, title: obj.title },
    },
  }),
  progress: (s, obj) => ({ ...s, progress: { processed: obj.processed_tasks ?? 0, total: obj.total_tasks ?? 0 } }),
  usage: (s, obj) => ({
    ...s,
    usage: {
      inputTokens: s.usage.inputTokens + (obj.input_tokens ?? 0),
      outputTokens: s.usage.outputTokens + (obj.output_tokens ?? 0),
      costUsd: s.usage.costUsd + (obj.cost_usd ?? 0),
    },
  }),
  summary: reduceSummary,
  degraded: (s, obj, place, seq) => reduceNotice(s, place, seq, obj),
  error: (s, obj, place, seq) => reduceNotice(s, place, seq, obj),
  section_end: (s, _obj, place) => reduceSectionEnd(s, place),
  stop: (s, obj) => finishRun({ ...s, status: obj.reason ?? "completed" }),
};

// ---------------------------------------------------------------- run, plan, report

function reduceRunStart(s: RunState, obj: ObjOf<"run_start">): RunState {
  return {
    ...s,
    sessionId: obj.session_id ?? null,
    question: obj.question ?? "",
    mode: obj.mode ?? null,
    models: obj.models ?? {},
    timeBudgetS: typeof obj.time_budget_s === "number" && obj.time_budget_s > 0 ? obj.time_budget_s : null,
    sources: Array.isArray(obj.sources) ? obj.sources.filter((n): n is string => typeof n === "string") : [],
    routes: Array.isArray(obj.routes)
      ? obj.routes
          .filter((r) => r && typeof r.name === "string")
          .map((r) => ({ name: r.name, searched: r.searched !== false, reason: String(r.reason ?? "") }))
      : [],
  };
}

function newPlan(content: string): PlanBlock {
  return { kind: "plan", content, steps: null, done: false };
}

function reducePlanReview(s: RunState, obj: ObjOf<"plan_review">, place: Placement): RunState {
  const review: PlanReviewState = { open: true, round: obj.round ?? 1, maxRounds: obj.max_rounds ?? 1, outcome: null };
  return updateLastBlockAnyTurn(
    s,
    place,
    "plan",
    (b) => ({ ...b, steps: [...(obj.steps ?? b.steps ?? [])], done: true, review }),
    () => ({ ...newPlan(""), steps: [...(obj.steps ?? [])], done: true, review }),
  );
}

function reducePlanReviewed(s: RunState, obj: ObjOf<"plan_reviewed">, place: Placement): RunState {
  return updateLastBlockAnyTurn(
    s,
    place,
    "plan",
    (b) => ({
      ...b,
      steps: obj.outcome === "revising" ? b.steps : [...(obj.steps ?? b.steps ?? [])],
      review: { open: false, round: b.review?.round ?? 1, maxRounds: b.review?.maxRounds ?? 1, outcome: obj.outcome },
    }),
    () => ({ ...newPlan(""), steps: [...(obj.steps ?? [])], done: true }),
  );
}

function reduceReport(s: RunState, obj: ObjOf<"report">, place: Placement): RunState {
  const report: VerifiedReport = {
    reportId: obj.report_id,
    title: obj.title ?? "",
    summary: obj.summary ?? "",
    keyFindings: [...(obj.key_findings ?? [])],
    method: obj.method ?? null,
    markdown: obj.markdown ?? "",
    sources: [...(obj.sources ?? [])].sort((a, b) => a.number - b.number),
    removed: [...(obj.removed_citations ?? [])],
    unsupported: [...(obj.unsupported_claims ?? [])],
    changes: obj.changes ?? null,
  };
  const next = updateLastBlockAnyTurn(
    registerDocuments(s, report.sources, false),
    place,
    "message",
    (b) => ({ ...b, role: "report", report, done: true }),
    () => ({ ...newMessage([]), report, done: true }),
  );
  return { ...next, reportId: obj.report_id ?? next.reportId };
}

function reduceSummary(s: RunState, obj: ObjOf<"summary">): RunState {
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
}

// ---------------------------------------------------------------- reasoning

type ReasoningObj = ObjOf<"reasoning_start"> | ObjOf<"reasoning_delta"> | ObjOf<"reasoning_done">;

function reduceReasoning(s: RunState, obj: ReasoningObj, place: Placement): RunState {
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
        return i < 0 ? l : { ...l, steps: replaceAt(l.steps, i, (st) => ({ ...st, done: true })) };
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
        return { ...t, blocks: replaceAt(t.blocks, i, () => ({ ...b, done: true }) as PlanBlock | ThinkingBlock | MessageBlock) };
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
