import type { ComponentChildren } from "preact";
import { errorText } from "../format";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Mode } from "../api";
import { BUDGET_CHOICES, BUDGET_KEY, parseBudget, storeBudget } from "../budget";

interface Props {
  busy: boolean;
  placeholder: string;
  onSend: (text: string, mode: Mode, clarify: boolean, timeBudgetS: number | null, reviewPlan?: boolean) => Promise<void>;
  onStop: (() => void) | null;
  /** Text to put in the box (an example question); `nonce` makes repeats apply. */
  preset?: { text: string; nonce: number } | null;
  /** Extra controls for the bar (the source picker). */
  tools?: ComponentChildren;
  /** A line above the box (where to ask a follow-up instead). */
  note?: ComponentChildren;
  /** Why a question sent now waits (the server is warming up); null when it does not. */
  waiting?: string | null;
}

const MODE_KEY = "sleuth.mode";
const CLARIFY_KEY = "sleuth.clarify";
const REVIEW_KEY = "sleuth.reviewPlan";

export function Composer({ busy, placeholder, onSend, onStop, preset, tools, note, waiting }: Props) {
  const [text, setText] = useState("");
  const [mode, setMode] = useState<Mode>(() => (localStorage.getItem(MODE_KEY) === "light" ? "light" : "heavy"));
  const [clarify, setClarify] = useState(() => localStorage.getItem(CLARIFY_KEY) !== "off");
  const [reviewPlan, setReviewPlan] = useState(() => localStorage.getItem(REVIEW_KEY) === "on");
  const [budget, setBudget] = useState<number | null>(() => parseBudget(localStorage.getItem(BUDGET_KEY)));
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLTextAreaElement>(null);

  useEffect(() => localStorage.setItem(MODE_KEY, mode), [mode]);
  useEffect(() => localStorage.setItem(CLARIFY_KEY, clarify ? "on" : "off"), [clarify]);
  useEffect(() => localStorage.setItem(REVIEW_KEY, reviewPlan ? "on" : "off"), [reviewPlan]);
  useEffect(() => localStorage.setItem(BUDGET_KEY, storeBudget(budget)), [budget]);
  useEffect(() => {
    if (preset) {
      setText(preset.text);
      ref.current?.focus();
    }
  }, [preset]);
  // Grow with the text, up to a limit set in CSS.
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${el.scrollHeight}px`;
  }, [text]);
  // Give the box focus back when a run ends, so the next question can be typed at once.
  useEffect(() => {
    if (!busy) ref.current?.focus();
  }, [busy]);

  const disabled = busy || sending;
  const submit = async () => {
    const t = text.trim();
    if (!t || disabled) return;
    setSending(true);
    setError(null);
    try {
      await onSend(t, mode, clarify, budget, reviewPlan);
      setText("");
    } catch (e) {
      setError(errorText(e));
    } finally {
      setSending(false);
    }
  };

  const onKeyDown = (e: KeyboardEvent) => {
    // Enter sends, Shift+Enter is a new line; never send mid IME composition.
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void submit();
    }
  };

  return (
    <form
      class="composer"
      aria-label="New research"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      {error ? (
        <p class="notice notice-error" role="alert">
          {error}
        </p>
      ) : null}
      {waiting ? (
        <p class="notice notice-info warmup" role="status">
          <span class="notice-icon" aria-hidden="true">
            ◔
          </span>
          {waiting}
        </p>
      ) : null}
      {note ? <div class="composer-note muted small">{note}</div> : null}
      <label for="composer-input" class="sr-only">
        Research question
      </label>
      <textarea
        id="composer-input"
        ref={ref}
        rows={1}
        value={text}
        placeholder={placeholder}
        disabled={disabled}
        aria-describedby="composer-hint"
        onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
        onKeyDown={onKeyDown}
      />
      <div class="composer-bar">
        <fieldset class="mode" disabled={disabled}>
          <legend class="sr-only">Research depth</legend>
          <label class={mode === "light" ? "on" : ""}>
            <input type="radio" name="mode" value="light" checked={mode === "light"} onChange={() => setMode("light")} />
            Light
          </label>
          <label class={mode === "heavy" ? "on" : ""}>
            <input type="radio" name="mode" value="heavy" checked={mode === "heavy"} onChange={() => setMode("heavy")} />
            Heavy
          </label>
        </fieldset>
        <label class="budget">
          <span class="sr-only">Time budget</span>
          <select
            value={budget === null ? "" : String(budget)}
            disabled={disabled}
            title="How long the research may take"
            onChange={(e) => setBudget(parseBudget((e.currentTarget as HTMLSelectElement).value))}
          >
            {BUDGET_CHOICES.map((c) => (
              <option key={c.label} value={c.seconds === null ? "" : String(c.seconds)}>
                {c.label}
              </option>
            ))}
          </select>
        </label>
        <label class="toggle">
          <input type="checkbox" checked={clarify} disabled={disabled} onChange={(e) => setClarify((e.currentTarget as HTMLInputElement).checked)} />
          Ask clarifying questions
        </label>
        <label class="toggle">
          <input type="checkbox" checked={reviewPlan} disabled={disabled} onChange={(e) => setReviewPlan((e.currentTarget as HTMLInputElement).checked)} />
          Review the plan
        </label>
        {tools}
        <span id="composer-hint" class="hint muted small">
          Enter to send · Shift+Enter for a new line
        </span>
        <span class="spacer" />
        {busy && onStop ? (
          <button type="button" class="btn btn-danger" onClick={onStop}>
            ■ Stop
          </button>
        ) : (
          <button type="submit" class="btn btn-primary" disabled={disabled || !text.trim()}>
            {sending ? (waiting ? "Waiting for the engines…" : "Sending…") : "Research"}
          </button>
        )}
      </div>
    </form>
  );
}
