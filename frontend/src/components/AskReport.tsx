import { useState } from "preact/hooks";
import { errorText } from "../format";

/**
 * The follow-up box under a report: a question answered from the report and its sources, without
 * new research (the composer at the bottom starts new research).
 */
export function AskReport({ reportId, onAsk }: { reportId: string; onAsk: (question: string) => Promise<void> }) {
  const id = `followup-${reportId}`;
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async () => {
    const q = text.trim();
    if (!q || busy) return;
    setBusy(true);
    setError(null);
    try {
      await onAsk(q);
      setText("");
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="ask-report"
      aria-label="Follow-up about this report"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <p class="ask-report-label" id={`${id}-hint`}>
        <strong>Follow-up</strong> <span class="muted small">answered from this report and its sources · no new research</span>
      </p>
      <input
        id={id}
        type="text"
        aria-label="Follow-up question about this report"
        aria-describedby={`${id}-hint`}
        placeholder="Ask a follow-up about this report…"
        value={text}
        disabled={busy}
        onInput={(e) => setText((e.target as HTMLInputElement).value)}
      />
      <button type="submit" class="btn" disabled={busy || !text.trim()}>
        Ask follow-up
      </button>
      {error ? (
        <p class="small notice-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
