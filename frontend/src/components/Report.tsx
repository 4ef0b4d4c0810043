import { useEffect, useRef, useState } from "preact/hooks";
import type { MessageBlock, RunState } from "../timeline/state";
import type { NumberedSource } from "../types";
import { openViewer } from "../viewer";
import { viewerRequest } from "../viewerRequest";
import { withoutChangesSection } from "../schedules";
import { ChangesView } from "./Changes";
import { DownloadMenu } from "./DownloadMenu";
import { Markdown } from "./Markdown";
import { ReportHeader } from "./ReportHeader";
import { SourceCard, SourcesList } from "./ReportSources";
import { useChipEvents, useCitations } from "./reportCitations";
import { VerificationNotes } from "./VerificationNotes";

/**
 * The final report: the streamed draft until the verified `report` packet replaces it, with
 * citation chips, a sources panel beside it, and copy / download.
 */
export function ReportView({ block, run }: { block: MessageBlock; run: RunState }) {
  const verified = block.report;
  const markdown = verified?.markdown ?? block.draft;
  const changes = verified?.changes ?? null;
  // The structured diff stands in for the section the server opened the markdown with.
  const shown = changes ? withoutChangesSection(markdown, changes.changed) : markdown;
  const { lists, byNumber, cite } = useCitations(run, verified);
  const [panelOpen, setPanelOpen] = useState(true);
  const [active, setActive] = useState<number | null>(null);
  const bodyRef = useRef<HTMLDivElement>(null);
  const panelRef = useRef<HTMLElement>(null);
  const panelId = `sources-${run.runId ?? "run"}`;
  const { hover, handlers } = useChipEvents(bodyRef, (n) => {
    setActive(n);
    setPanelOpen(true);
    const source = byNumber.get(n);
    if (source) openViewer(viewerRequest(source, markdown, run.sessionId));
  });

  // Bring the highlighted source into view in the panel.
  useEffect(() => {
    if (active === null) return;
    const el = panelRef.current?.querySelector(`[data-source="${active}"]`);
    if (el && "scrollIntoView" in el) (el as HTMLElement).scrollIntoView({ block: "nearest", behavior: "smooth" });
  }, [active, panelOpen]);

  const hovered = hover ? byNumber.get(hover.n) : undefined;
  return (
    <section class={`report ${panelOpen ? "with-panel" : ""}`} aria-label={verified ? "Research report" : "Report draft"}>
      <div class="report-main">
        <div class="report-toolbar">
          <ReportState verified={!!verified} done={block.done} />
          <span class="spacer" />
          {verified ? <CopyButton text={verified.markdown} /> : null}
          {verified ? <DownloadMenu reportId={verified.reportId} /> : null}
          <button type="button" class="btn btn-ghost" aria-expanded={panelOpen} aria-controls={panelId} onClick={() => setPanelOpen(!panelOpen)}>
            Sources ({lists.cited.length + lists.seen.length})
          </button>
        </div>
        <div class="report-body" ref={bodyRef} {...handlers}>
          {verified ? <ReportHeader report={verified} titleOf={(n) => byNumber.get(n)?.title} /> : null}
          {changes ? <ChangesView changes={changes} titleOf={(n) => byNumber.get(n)?.title} /> : null}
          <Markdown markdown={shown} cite={cite} class={verified ? "" : "draft"} />
          {hover && hovered ? <SourceCard doc={hovered} top={hover.top} left={hover.left} unsupported={hover.unsupported} /> : null}
        </div>
        {verified ? <VerificationNotes report={verified} /> : null}
      </div>
      {panelOpen ? (
        <aside class="sources-panel" id={panelId} aria-label="Sources" ref={panelRef}>
          <SourcesList cited={lists.cited} seen={lists.seen} active={active} markdown={markdown} sessionId={run.sessionId} />
        </aside>
      ) : null}
    </section>
  );
}

/** Where the report stands: streaming, verifying its citations, or verified. */
export function ReportState({ verified, done }: { verified: boolean; done: boolean }) {
  return (
    <span class="report-state">
      {verified ? (
        <>
          <span aria-hidden="true">✓</span> Verified report
        </>
      ) : done ? (
        "Verifying citations…"
      ) : (
        <>
          <span class="spinner" aria-hidden="true" /> Writing report…
        </>
      )}
    </span>
  );
}

function CopyButton({ text }: { text: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
    setTimeout(() => setState("idle"), 2000);
  };
  return (
    <button type="button" class="btn btn-ghost" onClick={copy} aria-live="polite">
      {state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : "Copy"}
    </button>
  );
}

/** Markdown for download: the verified text plus a sources list with the URLs. */
export function reportFile(markdown: string, sources: NumberedSource[]): string {
  // The verified report usually lists its sources already; add them only when it does not.
  if (!sources.length || sources.some((s) => s.url && markdown.includes(s.url))) return markdown;
  const refs = sources.map((s) => `[${s.number}] ${s.title || s.url} — ${s.url}`).join("\n");
  return `${markdown.trimEnd()}\n\n---\n\n${refs}\n`;
}
