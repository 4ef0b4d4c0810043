import type { ComponentChildren } from "preact";
import type { VerifiedReport } from "../timeline/state";

/** What verification found under the report: citations it doubts, and citations it removed. */
export function VerificationNotes({ report }: { report: VerifiedReport }) {
  return (
    <>
      <Folded
        class="removed unsupported-claims"
        items={report.unsupported}
        label={(n) => `${n} claim${n === 1 ? "" : "s"} may not be supported`}
        item={(c) => (
          <>
            {/* a factual sentence with no citation at all is flagged with an empty marker */}
            {c.marker ? <code>{c.marker}</code> : <em>uncited</em>} “{c.sentence}” — {c.reason}
          </>
        )}
      />
      <Folded
        class="removed"
        items={report.removed}
        label={(n) => `${n} citation${n === 1 ? "" : "s"} removed during verification`}
        item={(r) => (
          <>
            <code>{r.marker}</code>: {r.reason}
          </>
        )}
      />
    </>
  );
}

function Folded<T>({
  class: cls,
  items,
  label,
  item,
}: {
  class: string;
  items: T[];
  label: (n: number) => string;
  item: (x: T) => ComponentChildren;
}) {
  if (!items.length) return null;
  return (
    <details class={cls}>
      <summary>{label(items.length)}</summary>
      <ul>
        {items.map((x, i) => (
          <li key={i}>{item(x)}</li>
        ))}
      </ul>
    </details>
  );
}
