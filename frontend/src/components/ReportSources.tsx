import type { Document, NumberedSource } from "../types";
import { describeUrl } from "../urls";
import { openViewer } from "../viewer";
import { viewerRequest } from "../viewerRequest";
import { SourceTitle } from "./SourceItem";

/** The sources panel: cited sources by number (`active` highlighted), then the others seen. */
export function SourcesList({
  cited,
  seen,
  active,
  markdown = "",
  sessionId = null,
}: {
  cited: NumberedSource[];
  seen: Document[];
  active: number | null;
  markdown?: string;
  sessionId?: string | null;
}) {
  return (
    <div class="sources">
      <h3 class="sources-h">Cited ({cited.length})</h3>
      {cited.length ? (
        <ol class="sources-list">
          {cited.map((s) => (
            <li key={s.id} data-source={s.number} class={active === s.number ? "active" : ""} aria-current={active === s.number ? "true" : undefined}>
              <span class="src-n">{s.number}</span>
              <div>
                <SourceTitle doc={s} />
                <OpenButton doc={s} markdown={markdown} sessionId={sessionId} />
                {s.snippet ? <p class="src-snippet">{s.snippet}</p> : null}
              </div>
            </li>
          ))}
        </ol>
      ) : (
        <p class="muted small">No citations yet.</p>
      )}
      {seen.length ? (
        <details class="seen">
          <summary>Also seen ({seen.length})</summary>
          <ul class="sources-list seen-list">
            {seen.map((s) => (
              <li key={s.id}>
                <SourceTitle doc={s} />
                <OpenButton doc={s} markdown="" sessionId={sessionId} />
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </div>
  );
}

function OpenButton({ doc, markdown, sessionId }: { doc: Document | NumberedSource; markdown: string; sessionId: string | null }) {
  return (
    <button type="button" class="btn btn-ghost btn-small src-open" onClick={() => openViewer(viewerRequest(doc, markdown, sessionId))}>
      Open<span class="sr-only"> {doc.title || doc.url}</span>
    </button>
  );
}

/** The card shown beside a hovered or focused citation chip. */
export function SourceCard({ doc, top, left, unsupported }: { doc: Document; top: number; left: number; unsupported?: string }) {
  const u = describeUrl(doc.url);
  return (
    <div class="source-card" role="tooltip" style={{ top: `${top}px`, left: `${left}px` }}>
      {unsupported ? <div class="source-card-flag">May not support this sentence: {unsupported}</div> : null}
      <div class="source-card-title">{doc.title || doc.url}</div>
      <div class="src-domain">{u.domain}</div>
      {doc.snippet ? <p class="source-card-snippet">{doc.snippet}</p> : null}
    </div>
  );
}
