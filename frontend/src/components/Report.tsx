import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { CitationTarget } from "../markdown";
import { sourceLists } from "../timeline/selectors";
import type { MessageBlock, RunState } from "../timeline/state";
import type { Document, NumberedSource, UnsupportedClaim } from "../types";
import { describeUrl } from "../urls";
import { Markdown } from "./Markdown";
import { SourceTitle } from "./SourceItem";
import { reportMarkdownUrl } from "../api";
import { authHeaders } from "../auth";
import { viewerRequest } from "../viewerRequest";
import { openViewer } from "../viewer";

interface Hover {
  n: number;
  top: number;
  left: number;
  unsupported?: string;
}

/**
 * The final report: the streamed draft until the verified `report` packet replaces it, with
 * citation chips, a sources panel beside it, and copy / download.
 */
export function ReportView({ block, run }: { block: MessageBlock; run: RunState }) {
  const verified = block.report;
  const markdown = verified?.markdown ?? block.draft;
  const lists = useMemo(() => sourceLists(run, verified), [run, verified]);
  const byNumber = useMemo(() => {
    const m = new Map<number, NumberedSource>();
    for (const s of lists.cited) m.set(s.number, s);
    return m;
  }, [lists]);
  // The markdown is rebuilt when `cite` changes, so keep it stable while the cited set is
  // the same: later packets (usage, summary) must not detach chips a reader is focused on.
  const byNumberRef = useRef(byNumber);
  byNumberRef.current = byNumber;
  const flags = useMemo(() => unsupportedByChip(verified?.unsupported ?? []), [verified]);
  const flagsRef = useRef(flags);
  flagsRef.current = flags;
  const citeKey = lists.cited.map((s) => `${s.number}:${s.title}`).join("\n") + [...flags].join("\n");
  const cite = useCallback(
    (n: number, occurrence: number): CitationTarget | null => {
      const s = byNumberRef.current.get(n);
      return s ? { number: n, title: s.title, unsupported: flagsRef.current.get(`[${n}]#${occurrence}`) } : null;
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [citeKey],
  );

  const [panelOpen, setPanelOpen] = useState(true);
  const [active, setActive] = useState<number | null>(null);
  const [hover, setHover] = useState<Hover | null>(null);
  const bodyRef = useRef<HTMLDivElement>(null);
  const panelRef = useRef<HTMLElement>(null);
  const panelId = `sources-${run.runId ?? "run"}`;

  // Chips are plain DOM inside the sanitised markdown, so events are delegated here.
  const chipOf = (e: Event) => (e.target instanceof Element ? (e.target.closest(".cite-chip") as HTMLElement | null) : null);
  const showHover = (chip: HTMLElement) => {
    const box = bodyRef.current?.getBoundingClientRect();
    const r = chip.getBoundingClientRect();
    if (!box) return;
    setHover({
      n: Number(chip.dataset.cite),
      top: r.bottom - box.top + 6,
      left: Math.max(0, Math.min(r.left - box.left, box.width - 320)),
      unsupported: chip.dataset.unsupported,
    });
  };
  const onOver = (e: Event) => {
    const c = chipOf(e);
    if (c) showHover(c);
  };
  const onOut = (e: Event) => {
    if (chipOf(e)) setHover(null);
  };
  const onClick = (e: Event) => {
    const c = chipOf(e);
    if (!c) return;
    const n = Number(c.dataset.cite);
    setActive(n);
    setPanelOpen(true);
    const source = byNumber.get(n);
    if (source) openViewer(viewerRequest(source, markdown));
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key === "Escape") setHover(null);
  };

  // Bring the highlighted source into view in the panel.
  useEffect(() => {
    if (active === null) return;
    const el = panelRef.current?.querySelector(`[data-source="${active}"]`);
    if (el && "scrollIntoView" in el) (el as HTMLElement).scrollIntoView({ block: "nearest", behavior: "smooth" });
  }, [active, panelOpen]);

  const hovered = hover ? byNumber.get(hover.n) : undefined;
  const total = lists.cited.length + lists.seen.length;

  return (
    <section class={`report ${panelOpen ? "with-panel" : ""}`} aria-label={verified ? "Research report" : "Report draft"}>
      <div class="report-main">
        <div class="report-toolbar">
          <span class="report-state">
            {verified ? (
              <>
                <span aria-hidden="true">✓</span> Verified report
              </>
            ) : block.done ? (
              "Verifying citations…"
            ) : (
              <>
                <span class="spinner" aria-hidden="true" /> Writing report…
              </>
            )}
          </span>
          <span class="spacer" />
          {verified ? <CopyButton text={verified.markdown} /> : null}
          {verified ? <DownloadButton markdown={verified.markdown} sources={verified.sources} reportId={verified.reportId} /> : null}
          <button type="button" class="btn btn-ghost" aria-expanded={panelOpen} aria-controls={panelId} onClick={() => setPanelOpen(!panelOpen)}>
            Sources ({total})
          </button>
        </div>
        <div
          class="report-body"
          ref={bodyRef}
          onMouseOver={onOver}
          onMouseOut={onOut}
          onFocusIn={onOver}
          onFocusOut={onOut}
          onClick={onClick}
          onKeyDown={onKey}
        >
          <Markdown markdown={markdown} cite={cite} class={verified ? "" : "draft"} />
          {hover && hovered ? <SourceCard doc={hovered} top={hover.top} left={hover.left} unsupported={hover.unsupported} /> : null}
        </div>
        {verified?.unsupported.length ? (
          <details class="removed unsupported-claims">
            <summary>
              {verified.unsupported.length} citation{verified.unsupported.length === 1 ? "" : "s"} may not be supported by the
              cited source
            </summary>
            <ul>
              {verified.unsupported.map((c, i) => (
                <li key={i}>
                  <code>{c.marker}</code> “{c.sentence}” — {c.reason}
                </li>
              ))}
            </ul>
          </details>
        ) : null}
        {verified?.removed.length ? (
          <details class="removed">
            <summary>
              {verified.removed.length} citation{verified.removed.length === 1 ? "" : "s"} removed during verification
            </summary>
            <ul>
              {verified.removed.map((r, i) => (
                <li key={i}>
                  <code>{r.marker}</code>: {r.reason}
                </li>
              ))}
            </ul>
          </details>
        ) : null}
      </div>
      {panelOpen ? (
        <aside class="sources-panel" id={panelId} aria-label="Sources" ref={panelRef}>
          <SourcesList cited={lists.cited} seen={lists.seen} active={active} markdown={markdown} />
        </aside>
      ) : null}
    </section>
  );
}

/** Reasons keyed by `[n]#occurrence`, the chip they belong to. */
export function unsupportedByChip(claims: UnsupportedClaim[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const c of claims) m.set(`${c.marker}#${c.occurrence ?? 1}`, c.reason);
  return m;
}

function SourceCard({ doc, top, left, unsupported }: { doc: Document; top: number; left: number; unsupported?: string }) {
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

export function SourcesList({
  cited,
  seen,
  active,
  markdown = "",
}: {
  cited: NumberedSource[];
  seen: Document[];
  active: number | null;
  markdown?: string;
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
                <OpenButton doc={s} markdown={markdown} />
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
                <OpenButton doc={s} markdown="" />
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </div>
  );
}

function OpenButton({ doc, markdown }: { doc: Document | NumberedSource; markdown: string }) {
  return (
    <button type="button" class="btn btn-ghost btn-small src-open" onClick={() => openViewer(viewerRequest(doc, markdown))}>
      Open<span class="sr-only"> {doc.title || doc.url}</span>
    </button>
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

function DownloadButton({ markdown, sources, reportId }: { markdown: string; sources: NumberedSource[]; reportId: string }) {
  // The server's file (title, report, sources list) when it has the report; built here otherwise.
  const download = async () => {
    let text: string | null = null;
    if (reportId) {
      try {
        const res = await fetch(reportMarkdownUrl(reportId), { headers: authHeaders() });
        if (res.ok) text = await res.text();
      } catch {
        /* offline or gone: fall back below */
      }
    }
    const blob = new Blob([text ?? reportFile(markdown, sources)], { type: "text/markdown;charset=utf-8" });
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = `sleuth-${reportId || "report"}.md`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <button type="button" class="btn btn-ghost" onClick={download}>
      Download .md
    </button>
  );
}
