import { stripNumbering } from "../format";
import { planStepStates } from "../timeline/selectors";
import type { Lane, PlanBlock } from "../timeline/state";
import { PlanReview } from "./PlanReview";

const REVIEWED = { approved: "approved by you", edited: "edited by you", revising: "revised at your request", timeout: "not reviewed in time" } as const;

const MARK = { done: "✓", active: "◐", todo: "○" } as const;
const SR = { done: "done", active: "in progress", todo: "to do" } as const;

/** Streams the plan as text, then collapses to numbered steps that tick as lanes finish. */
export function PlanCard({ plan, lanes, runId, live }: { plan: PlanBlock; lanes: Lane[]; runId?: string | null; live?: boolean }) {
  if (plan.review?.open && live && runId && plan.steps) return <PlanReview plan={plan} runId={runId} />;
  if (!plan.steps) {
    return (
      <section class="card plan" aria-label="Research plan">
        <h3 class="card-title">
          <span class="spinner" aria-hidden="true" /> Planning…
        </h3>
        <pre class="plan-stream">{plan.content}</pre>
      </section>
    );
  }
  const states = planStepStates(plan.steps, lanes);
  const done = states.filter((s) => s === "done").length;
  return (
    <section class="card plan" aria-label="Research plan">
      <h3 class="card-title">
        Plan <span class="muted">· {done}/{plan.steps.length} steps covered</span>
        {plan.review?.outcome ? <span class="muted"> · {REVIEWED[plan.review.outcome]}</span> : null}
      </h3>
      <ol class="plan-steps">
        {plan.steps.map((step, i) => (
          <li key={i} class={`plan-step ${states[i]}`}>
            <span class="tick" aria-hidden="true">{MARK[states[i]]}</span>
            <span>{stripNumbering(step)}</span>
            <span class="sr-only"> ({SR[states[i]]})</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
