import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../format";
import { getDocument, type OpenedDocument } from "../api";
import { markBlocks } from "../docblocks";
import { describeUrl, isMcpUrl } from "../urls";
import { onOpenViewer, type ViewerRequest } from "../viewer";
import { DocumentText } from "./DocumentText";

type Loaded = { state: "loading" } | { state: "error"; message: string } | { state: "ready"; doc: OpenedDocument };

/**
 * The source viewer: a dialog with the document's title, a link out for web pages, and its
 * text (as headings, paragraphs, lists, code and tables) with the cited passages highlighted and
 * the first one scrolled into view. Text only: nothing from the document is ever inserted as HTML.
 */
export function DocumentViewer() {
  const [request, setRequest] = useState<ViewerRequest | null>(null);
  const [loaded, setLoaded] = useState<Loaded>({ state: "loading" });
  const dialogRef = useRef<HTMLDialogElement>(null);
  const bodyRef = useRef<HTMLDivElement>(null);

  useEffect(() => onOpenViewer(setRequest), []);

  useEffect(() => {
    if (!request) return;
    let live = true;
    setLoaded({ state: "loading" });
    const dialog = dialogRef.current;
    if (dialog && !dialog.open) {
      if (typeof dialog.showModal === "function") dialog.showModal();
      else dialog.setAttribute("open", "");
    }
    getDocument(request.url, request.sessionId)
      .then((doc) => live && setLoaded({ state: "ready", doc }))
      .catch((e: unknown) => live && setLoaded({ state: "error", message: errorText(e) }));
    return () => {
      live = false;
    };
  }, [request]);

  useEffect(() => {
    if (loaded.state !== "ready") return;
    const first = bodyRef.current?.querySelector("mark");
    if (first && "scrollIntoView" in first) first.scrollIntoView({ block: "center" });
  }, [loaded]);

  const close = () => {
    const dialog = dialogRef.current;
    if (dialog?.open) {
      if (typeof dialog.close === "function") dialog.close();
      else dialog.removeAttribute("open");
    }
    setRequest(null);
  };

  const doc = loaded.state === "ready" ? loaded.doc : null;
  const title = doc?.title || request?.title || request?.url || "Document";
  const link = describeUrl(doc?.url ?? request?.url ?? "");
  const shown = doc && request ? markBlocks(doc.blocks, request.passages, doc.title) : null;
  const marks = shown?.marks ?? 0;

  return (
    <dialog class="doc-viewer" ref={dialogRef} aria-labelledby="doc-viewer-title" onClose={() => setRequest(null)}>
      {request ? (
        <div class="doc-viewer-inner">
          <header class="doc-viewer-head">
            <div>
              <h2 id="doc-viewer-title">{title}</h2>
              <p class="muted small">
                {link.href ? (
                  <a href={link.href} target="_blank" rel="noopener noreferrer">
                    Open the page ↗
                  </a>
                ) : (
                  <span>
                    {doc?.collection ? `Local collection ${doc.collection}` : isMcpUrl(request.url) ? `MCP server ${link.domain}` : link.domain} ·{" "}
                    <code>{doc?.url ?? request.url}</code>
                  </span>
                )}
                {doc ? ` · ${marks ? `${marks} cited passage${marks === 1 ? "" : "s"} highlighted` : "cited passage not found in the text"}` : ""}
              </p>
            </div>
            <button type="button" class="btn btn-ghost" onClick={close} aria-label="Close the document">
              ✕
            </button>
          </header>
          <div class="doc-viewer-body" ref={bodyRef}>
            {loaded.state === "loading" ? <p class="muted">Opening…</p> : null}
            {loaded.state === "error" ? (
              <p class="notice notice-error" role="alert">
                Could not open this document: {loaded.message}
              </p>
            ) : null}
            {shown ? <DocumentText blocks={shown.blocks} /> : null}
          </div>
        </div>
      ) : null}
    </dialog>
  );
}
