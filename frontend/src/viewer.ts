// Opening the document viewer from anywhere (a citation chip, a source in the panel) without
// threading callbacks through every component in between.

export interface ViewerRequest {
  url: string;
  title: string;
  /** Text to highlight in the document: the passages it was cited for. */
  passages: string[];
  /** The session whose run read it: a tool's result (mcp://) opens only there. */
  sessionId: string | null;
}

type Listener = (request: ViewerRequest) => void;
const listeners = new Set<Listener>();

export function openViewer(request: ViewerRequest): void {
  for (const listener of listeners) listener(request);
}

/** Subscribe; returns the unsubscribe function. */
export function onOpenViewer(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
