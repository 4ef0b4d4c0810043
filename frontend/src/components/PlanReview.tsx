import { useState } from "preact/hooks";
import * as api from "../api";
import { stripNumbering, errorText } from "../format";
import type { PlanBlock } from "../timeline/state";

/** What to send for the steps as edited: approval when nothing changed, else the new steps. */
export function planAnswerFor(original: string[], edited: string[]): api.PlanAnswer {
  const kept = edited.map((s) => s.trim()).filter(Boolean);
  const same = kept.length === original.length && kept.every((s, i) => s === stripNumbering(original[i]).trim());
  return same ? { approve: true } : { steps: kept };
}

/** The plan while the run waits for the user: reorder, edit, delete or add steps; approve or ask for a revision. */
export function PlanReview({ plan, runId }: { plan: PlanBlock; runId: string }) {
  const original = plan.steps ?? [];
  const review = plan.review!;
  const [steps, setSteps] = useState<string[]>(() => original.map(stripNumbering));
  const [feedback, setFeedback] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const canRevise = review.round < review.maxRounds;

  const update = (i: number, text: string) => setSteps(steps.map((s, j) => (j === i ? text : s)));
  const move = (i: number, by: number) => {
    const j = i + by;
    if (j < 0 || j >= steps.length) return;
    const next = steps.slice();
    [next[i], next[j]] = [next[j], next[i]];
    setSteps(next);
  };
  const send = async (answer: api.PlanAnswer) => {
    setBusy(true);
    setError(null);
    try {
      await api.answerPlan(runId, answer);
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
    }
  };
  const hasSteps = steps.some((s) => s.trim());

  return (
    <section class="card plan plan-review" aria-label="Review the research plan">
      <h3 class="card-title">
        Review the plan <span class="muted">· research starts when you approve{review.round > 1 ? ` · revision ${review.round - 1}` : ""}</span>
      </h3>
      <ol class="plan-edit">
        {steps.map((step, i) => (
          <li key={i}>
            <textarea aria-label={`Step ${i + 1}`} rows={2} value={step} onInput={(e) => update(i, (e.target as HTMLTextAreaElement).value)} />
            <div class="plan-edit-actions">
              <button type="button" class="btn btn-ghost" aria-label={`Move step ${i + 1} up`} disabled={i === 0} onClick={() => move(i, -1)}>
                ↑
              </button>
              <button type="button" class="btn btn-ghost" aria-label={`Move step ${i + 1} down`} disabled={i === steps.length - 1} onClick={() => move(i, 1)}>
                ↓
              </button>
              <button type="button" class="btn btn-ghost" aria-label={`Delete step ${i + 1}`} onClick={() => setSteps(steps.filter((_, j) => j !== i))}>
                ✕
              </button>
            </div>
          </li>
        ))}
      </ol>
      <div class="plan-review-row">
        <button type="button" class="btn btn-ghost" disabled={steps.length >= 6} onClick={() => setSteps([...steps, ""])}>
          + Add step
        </button>
        <span class="spacer" />
        <button type="button" class="btn btn-primary" disabled={busy || !hasSteps} onClick={() => send(planAnswerFor(original, steps))}>
          Approve plan
        </button>
      </div>
      {canRevise ? (
        <div class="plan-review-row">
          <input
            type="text"
            class="plan-feedback"
            aria-label="Feedback on the plan"
            placeholder="Or tell Sleuth what to change…"
            value={feedback}
            onInput={(e) => setFeedback((e.target as HTMLInputElement).value)}
          />
          <button type="button" class="btn" disabled={busy || !feedback.trim()} onClick={() => send({ feedback: feedback.trim() })}>
            Revise
          </button>
        </div>
      ) : (
        <p class="muted small">The revision limit is reached: approve or edit the steps.</p>
      )}
      {error ? (
        <p class="notice notice-error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}
