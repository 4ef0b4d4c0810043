import type { ComponentChildren } from "preact";
import { digestLine, runDigest } from "../timeline/digest";
import type { RunState } from "../timeline/state";

/** The finished run's timeline folded into one line that opens to show all of it. */
export function TimelineFold({ run, children }: { run: RunState; children: ComponentChildren }) {
  return (
    <details class="timeline-fold">
      <summary>{digestLine(runDigest(run))}</summary>
      <div class="timeline-fold-body">{children}</div>
    </details>
  );
}
