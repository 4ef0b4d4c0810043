import { useCallback } from "preact/hooks";
import type { CitationTarget } from "../markdown";
import type { MessageBlock, RunState } from "../timeline/state";
import { Markdown } from "./Markdown";

/** A follow-up's answer: markdown whose citations are the report's own numbers. */
export function FollowupAnswer({ block, run }: { block: MessageBlock; run: RunState }) {
  const citations = run.citations;
  const cite = useCallback(
    (n: number): CitationTarget | null => (citations[n] ? { number: n, title: citations[n].title } : null),
    [citations],
  );
  return (
    <section class="followup-answer" aria-label="Answer from the report">
      <p class="muted small">Answered from the report and its sources · no new research</p>
      <Markdown markdown={block.draft} cite={cite} />
    </section>
  );
}
