import { useState } from "preact/hooks";
import { errorText } from "../format";

/** "Ask about this report": a follow-up answered from the report and its sources, without new research. */
export function AskReport({ onAsk }: { onAsk: (question: string) => Promise<void> }) {
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
      aria-label="Ask about this report"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <input
        type="text"
        aria-label="Question about this report"
        placeholder="Ask about this report (answered from it and its sources, no new research)…"
        value={text}
        disabled={busy}
        onInput={(e) => setText((e.target as HTMLInputElement).value)}
      />
      <button type="submit" class="btn" disabled={busy || !text.trim()}>
        Ask
      </button>
      {error ? (
        <p class="small notice-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
