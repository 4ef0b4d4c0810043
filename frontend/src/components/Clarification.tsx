import { useState } from "preact/hooks";
import { stripNumbering } from "../format";
import type { MessageBlock } from "../timeline/state";

/** Combine the per-question answers and the free text into one reply message. */
export function combineAnswers(questions: string[], answers: string[], extra: string): string {
  const parts: string[] = [];
  questions.forEach((q, i) => {
    const a = (answers[i] ?? "").trim();
    if (a) parts.push(`${i + 1}. ${stripNumbering(q)}\n   ${a.replace(/\n/g, "\n   ")}`);
  });
  const more = extra.trim();
  if (more) parts.push(parts.length ? `Also: ${more}` : more);
  return parts.join("\n\n");
}

interface Props {
  block: MessageBlock;
  /** Null when the card is no longer answerable (answered already, or not the latest run). */
  onSubmit: ((text: string) => Promise<void>) | null;
  runKey: string;
}

export function ClarificationCard({ block, onSubmit, runKey }: Props) {
  const [answers, setAnswers] = useState<string[]>(() => block.questions.map(() => ""));
  const [extra, setExtra] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const text = combineAnswers(block.questions, answers, extra);
  const disabled = !onSubmit || busy;

  if (!onSubmit) {
    // Answered (the next message in the thread is the answer): keep just the questions.
    return (
      <section class="card clarify answered" aria-labelledby={`clar-${runKey}`}>
        <h3 class="card-title" id={`clar-${runKey}`}>
          Sleuth asked
        </h3>
        {block.questions.length ? (
          <ol class="clarify-questions">
            {block.questions.map((q, i) => (
              <li key={i}>{stripNumbering(q)}</li>
            ))}
          </ol>
        ) : (
          <p class="clarify-text">{block.draft}</p>
        )}
      </section>
    );
  }

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!onSubmit || !text) return;
    setBusy(true);
    setError(null);
    try {
      await onSubmit(text);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card clarify" aria-labelledby={`clar-${runKey}`} onSubmit={submit}>
      <h3 class="card-title" id={`clar-${runKey}`}>
        A few questions before researching
      </h3>
      {block.questions.length === 0 ? <p class="clarify-text">{block.draft}</p> : null}
      {block.questions.map((q, i) => (
        <div class="field" key={i}>
          <label for={`clar-${runKey}-${i}`}>
            <span class="q-n">{i + 1}.</span> {stripNumbering(q)}
          </label>
          <textarea
            id={`clar-${runKey}-${i}`}
            rows={1}
            value={answers[i]}
            disabled={disabled}
            onInput={(e) => {
              const next = answers.slice();
              next[i] = (e.currentTarget as HTMLTextAreaElement).value;
              setAnswers(next);
            }}
          />
        </div>
      ))}
      <div class="field">
        <label for={`clar-${runKey}-extra`}>Anything else Sleuth should know?</label>
        <textarea id={`clar-${runKey}-extra`} rows={2} value={extra} disabled={disabled} onInput={(e) => setExtra((e.currentTarget as HTMLTextAreaElement).value)} />
      </div>
      {error ? (
        <p class="notice notice-error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="actions">
        <span class="muted small">Leave any box empty to let Sleuth decide.</span>
        <span class="spacer" />
        <button type="submit" class="btn btn-primary" disabled={disabled || !text}>
          {busy ? "Sending…" : "Answer and start research"}
        </button>
      </div>
    </form>
  );
}
