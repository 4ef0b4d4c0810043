// A finished run in one line: what the research did, for the collapsed timeline.

import { formatElapsed } from "../format";
import { lastMessage } from "./selectors";
import type { MessageBlock, PlanBlock, RunState } from "./state";

export interface RunDigest {
  steps: number;
  agents: number;
  cycles: number;
  elapsedS: number | null;
}

/** Counts from the run's own blocks: the plan it followed (the last one), its lanes and lane rows. */
export function runDigest(s: RunState): RunDigest {
  let plan: PlanBlock | null = null;
  let agents = 0;
  let cycles = 0;
  for (const t of s.turns) {
    for (const b of t.blocks) {
      if (b.kind === "plan") plan = b;
      if (b.kind === "lanes") {
        cycles += 1;
        agents += b.lanes.length;
      }
    }
  }
  return { steps: plan?.steps?.length ?? 0, agents, cycles, elapsedS: s.summary ? s.summary.elapsedS : null };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function digestLine(d: RunDigest): string {
  const line = `Researched ${plural(d.steps, "step")} with ${plural(d.agents, "agent")} in ${plural(d.cycles, "cycle")}`;
  return d.elapsedS === null ? line : `${line} · ${formatElapsed(d.elapsedS)}`;
}

/** A finished run with a verified report shows the report first and folds its timeline away. */
export function collapsesTimeline(s: RunState): boolean {
  if (s.status !== "completed" && s.status !== "deadline") return false;
  return s.turns.some((t) => t.blocks.some((b) => b.kind === "message" && b.report !== null));
}

/** The report a finished run leads with, under which a follow-up can be asked; null until there is one. */
export function reportFirst(s: RunState): MessageBlock | null {
  return collapsesTimeline(s) ? lastMessage(s) : null;
}
