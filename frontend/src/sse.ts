// Run event stream over fetch (not EventSource): we need to see HTTP statuses (a 404 run
// must not be retried forever), to send Last-Event-ID ourselves on every reconnect, and to
// stop for good once `stop` has arrived instead of letting the browser reconnect.

import { createParser } from "eventsource-parser";
import { errorText } from "./format";

import { authHeaders, reportUnauthorized } from "./auth";
import type { Packet } from "./types";

export interface SseEvent {
  event: string;
  data: string;
  id: string | null;
}

/** Incremental text/event-stream parsing (eventsource-parser), as a push-a-chunk, get-events API. */
export class SseParser {
  /** The last `retry:` the server sent, in ms. */
  retry: number | null = null;
  private pending: SseEvent[] = [];
  private readonly parser = createParser({
    onEvent: (ev) => this.pending.push({ event: ev.event || "message", data: ev.data, id: ev.id ?? null }),
    onRetry: (ms) => {
      this.retry = ms;
    },
  });

  /** Feed a chunk; returns the events completed by it. */
  push(chunk: string): SseEvent[] {
    this.parser.feed(chunk);
    const done = this.pending;
    this.pending = [];
    return done;
  }
}

export type ConnectionState = "connecting" | "live" | "reconnecting" | "closed" | "failed";

export interface RunStreamOptions {
  runId: string;
  /** Resume after this seq (-1: from the start). */
  lastSeq?: number;
  onPacket: (p: Packet) => void;
  onState?: (s: ConnectionState, detail?: string) => void;
  fetchImpl?: typeof fetch;
  /** Base delay for reconnect backoff, ms. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  url?: (runId: string) => string;
}

export interface RunStream {
  close(): void;
  /** Resolves when the stream has ended for good (stop received, closed, or failed). */
  done: Promise<ConnectionState>;
}

/**
 * Follow a run's packets until its `stop`. Reconnects with backoff on network errors, server
 * errors and streams that end early, sending Last-Event-ID so the server resumes after it.
 */
export function openRunStream(opts: RunStreamOptions): RunStream {
  const fetchFn = opts.fetchImpl ?? fetch.bind(globalThis);
  const base = opts.baseDelayMs ?? 500;
  const max = opts.maxDelayMs ?? 10_000;
  const url = (opts.url ?? ((id) => `/api/runs/${encodeURIComponent(id)}/events`))(opts.runId);
  let lastSeq = opts.lastSeq ?? -1;
  let closed = false;
  let ctrl: AbortController | null = null;
  let wake: (() => void) | null = null;
  let retryHint: number | null = null;
  let gotPackets = false;

  const setState = (s: ConnectionState, d?: string) => opts.onState?.(s, d);

  async function once(): Promise<"stopped" | "ended" | { fatal: string }> {
    ctrl = new AbortController();
    const headers: Record<string, string> = { Accept: "text/event-stream", ...authHeaders() };
    if (lastSeq >= 0) headers["Last-Event-ID"] = String(lastSeq);
    const res = await fetchFn(url, { headers, signal: ctrl.signal, cache: "no-store" });
    if (res.status === 404 || res.status === 410) return { fatal: `run not found (${res.status})` };
    if (res.status === 401) {
      reportUnauthorized();
      return { fatal: "not signed in, or the API token was not accepted" };
    }
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
    setState("live");
    const parser = new SseParser();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return "ended";
        const events = parser.push(value);
        if (parser.retry !== null) retryHint = parser.retry;
        for (const ev of events) {
          if (ev.event !== "packet" && ev.event !== "message") continue;
          let packet: Packet;
          try {
            packet = JSON.parse(ev.data) as Packet;
          } catch {
            continue; // a broken event is skipped, not fatal
          }
          if (typeof packet.seq !== "number") continue;
          if (packet.seq > lastSeq) lastSeq = packet.seq;
          gotPackets = true;
          opts.onPacket(packet);
          if (packet.obj?.type === "stop") return "stopped";
        }
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
  }

  const done = (async (): Promise<ConnectionState> => {
    let attempt = 0;
    setState("connecting");
    while (!closed) {
      let outcome: Awaited<ReturnType<typeof once>> | "error";
      let why = "";
      try {
        outcome = await once();
      } catch (e) {
        if (closed) break;
        outcome = "error";
        why = errorText(e);
      }
      if (closed) break;
      if (outcome === "stopped") {
        setState("closed");
        return "closed";
      }
      if (typeof outcome === "object") {
        setState("failed", outcome.fatal);
        return "failed";
      }
      // The stream broke or ended before `stop`: the run goes on server-side; resume.
      // Back off only while connections keep failing without delivering anything.
      attempt = gotPackets ? 1 : attempt + 1;
      gotPackets = false;
      setState("reconnecting", why || "stream ended early");
      const delay = Math.min(max, retryHint ?? base * 2 ** Math.min(attempt - 1, 6));
      await new Promise<void>((r) => {
        const t = setTimeout(r, delay);
        wake = () => {
          clearTimeout(t);
          r();
        };
      });
      wake = null;
    }
    setState("closed");
    return "closed";
  })();

  return {
    close() {
      closed = true;
      ctrl?.abort();
      wake?.();
    },
    done,
  };
}
