import { citingSentences, snippetPieces } from "./passages";
import type { Document, NumberedSource } from "./types";
import type { ViewerRequest } from "./viewer";

/** What the viewer highlights for a source: its snippet, and the report's sentences that cite it. */
export function viewerRequest(doc: Document | NumberedSource, markdown: string, sessionId: string | null): ViewerRequest {
  const cited = "number" in doc && markdown ? citingSentences(markdown, doc.number) : [];
  return { url: doc.url, title: doc.title, passages: [...cited, ...snippetPieces(doc.snippet ?? "")], sessionId };
}
