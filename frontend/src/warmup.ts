// Whether the server has warmed up: /api/health's `ready`, polled from when the page opens until it
// is true. Until then a question can still be sent; it waits for the engines, and the notice by the
// ask box says why.

export interface Readiness {
  ready: boolean;
  engines: number;
  enginesReady: number;
}

export const POLL_MS = 1000;

/** The notice to show by the ask box; null once ready (and before the first answer: no flash). */
export function warmupText(r: Readiness | null): string | null {
  if (!r || r.ready) return null;
  const engines = r.engines > 0 ? ` (${r.enginesReady} of ${r.engines} research engines ready)` : "";
  return `Sleuth is warming up${engines}. You can ask now: the research starts as soon as it is ready.`;
}

/**
 * Ask `get` until it answers ready, `waitMs` apart, telling `onChange` each answer. A failed request
 * is asked again (the server may be starting); it changes nothing shown. Returns a stop function.
 */
export function pollReadiness(
  get: () => Promise<Readiness>,
  onChange: (r: Readiness) => void,
  waitMs: number = POLL_MS,
): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ask = async () => {
    let r: Readiness | null = null;
    try {
      r = await get();
    } catch {
      /* asked again below */
    }
    if (stopped) return;
    if (r) onChange(r);
    if (!r?.ready) timer = setTimeout(() => void ask(), waitMs);
  };
  void ask();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
