// Run event stream over fetch (not EventSource): we need to see HTTP statuses (a 404 run
// must not be retried forever), to send Last-Event-ID ourselves on every reconnect, and to
// stop for good once `stop` has arrived instead of letting the browser reconnect.

import { authHeaders, reportUnauthorized } from "./auth";
import type { Packet } from "./types";

export interface SseEvent {
  event: string;
  data: string;
  id: string | null;
  retry: number | null;
}

/** Incremental parser for the text/event-stream format (WHATWG HTML §9.2). */
export class SseParser {
  private buf = "";
  private data: string[] = [];
  private event = "";
  private id: string | null = null;
  private retry: number | null = null;
  private sawField = false;

  /** Feed a chunk; returns the events completed by it. */
  push(chunk: string): SseEvent[] {
    this.buf += chunk;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (!m) break;
      // A lone \r at the end of the buffer may be the first half of \r\n: wait for more.
      if (m[0] === "\r" && m.index === this.buf.length - 1) break;
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  private line(line: string): SseEvent | null {
    if (line === "") {
      if (!this.sawField) return null;
      // Per spec an event without data lines is not dispatched (a bare `id:` or `retry:`).
      const ev: SseEvent | null = this.data.length
        ? { event: this.event || "message", data: this.data.join("\n"), id: this.id, retry: this.retry }
        : null;
      this.data = [];
      this.event = "";
      this.retry = null;
      this.sawField = false;
      return ev;
    }
    if (line.startsWith(":")) return null; // comment: heartbeat
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    this.sawField = true;
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id") {
      if (!value.includes("\0")) this.id = value;
    } else if (field === "retry") {
      if (/^\d+$/.test(value)) this.retry = parseInt(value, 10);
    }
    return null;
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
      return { fatal: "the server needs an API token" };
    }
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
    setState("live");
    const parser = new SseParser();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return "ended";
        for (const ev of parser.push(value)) {
          if (ev.retry !== null) retryHint = ev.retry;
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
        why = e instanceof Error ? e.message : String(e);
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
