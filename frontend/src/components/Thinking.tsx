import type { ThinkingBlock } from "../timeline/state";
import { Icon } from "./Icon";

/** The orchestrator's reasoning between cycles: one line, expandable. */
export function Thinking({ block }: { block: ThinkingBlock }) {
  const first = block.text.trim().split(/\n/)[0] ?? "";
  return (
    <details class="thinking">
      <summary>
        {!block.done ? <span class="spinner" aria-hidden="true" /> : <Icon name="thought" />}
        <span class="thinking-label">{block.done ? "Thought" : "Thinking…"}</span>
        <span class="thinking-preview">{first}</span>
      </summary>
      <p class="thinking-text">{block.text}</p>
    </details>
  );
}
