// Read-only views derived from RunState, kept out of components so they can be tested.

import type { Document, NumberedSource } from "../types";
import type { Lane, MessageBlock, PlanBlock, RunState, VerifiedReport } from "./state";
import { stepsCoveredBy } from "./similarity";

export function allLanes(s: RunState): Lane[] {
  const out: Lane[] = [];
  for (const t of s.turns) for (const b of t.blocks) if (b.kind === "lanes") out.push(...b.lanes);
  return out;
}

export function findPlan(s: RunState): PlanBlock | null {
  for (const t of s.turns) for (const b of t.blocks) if (b.kind === "plan") return b;
  return null;
}

export function lastMessage(s: RunState): MessageBlock | null {
  for (let i = s.turns.length - 1; i >= 0; i--) {
    const bs = s.turns[i].blocks;
    for (let j = bs.length - 1; j >= 0; j--) {
      const b = bs[j];
      if (b.kind === "message") return b;
    }
  }
  return null;
}

export function finalReport(s: RunState): VerifiedReport | null {
  return lastMessage(s)?.report ?? null;
}

export type StepState = "todo" | "active" | "done";

/**
 * Tick a plan step when a finished lane covers it; mark it active while a running lane does.
 * A failed or timed-out lane does not tick its step.
 */
export function planStepStates(steps: string[], lanes: Lane[]): StepState[] {
  const states: StepState[] = steps.map(() => "todo");
  for (const lane of lanes) {
    if (!lane.task) continue;
    const covered = stepsCoveredBy(lane.task, steps);
    for (const i of covered) {
      if (lane.status === "done") states[i] = "done";
      else if ((lane.status === "running" || lane.status === "pending") && states[i] === "todo") states[i] = "active";
    }
  }
  return states;
}

export interface SourceLists {
  /** Cited in the report, by citation number. */
  cited: NumberedSource[];
  /** Seen during research but not cited. */
  seen: Document[];
}

/** Sources for the panel: cited first (verified report, else live citation_info), then seen. */
export function sourceLists(s: RunState, report: VerifiedReport | null = finalReport(s)): SourceLists {
  let cited: NumberedSource[];
  if (report) {
    cited = report.sources;
  } else {
    cited = Object.values(s.citations)
      .sort((a, b) => a.number - b.number)
      .map((c) => {
        const d = s.documents[c.documentId];
        return {
          id: c.documentId,
          url: c.url || d?.url || "",
          title: c.title || d?.title || "",
          snippet: d?.snippet ?? "",
          source: d?.source ?? "",
          number: c.number,
        };
      });
  }
  const citedIds = new Set(cited.map((d) => d.id));
  const citedUrls = new Set(cited.map((d) => d.url));
  const seen = s.seenOrder
    .map((id) => s.documents[id])
    .filter((d): d is Document => !!d && !citedIds.has(d.id) && !citedUrls.has(d.url));
  return { cited, seen };
}

/** Tasks done / planned: the server's progress packet, else counted from the lanes. */
export function progressOf(s: RunState): { processed: number; total: number } {
  if (s.progress) return s.progress;
  const lanes = allLanes(s);
  const finished = lanes.filter((l) => l.status === "done" || l.status === "failed" || l.status === "timed_out");
  return { processed: finished.length, total: lanes.length };
}

/** Seconds of the run's time budget left after `elapsedS`; null when the run has no budget. */
export function timeLeftOf(s: RunState, elapsedS: number): number | null {
  return s.timeBudgetS === null ? null : Math.max(0, s.timeBudgetS - Math.max(0, elapsedS));
}

export function isLive(s: RunState): boolean {
  return s.status === "running";
}
