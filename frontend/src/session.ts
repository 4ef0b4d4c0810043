// The open session: its thread (user messages and the runs they started) and one live
// packet stream per run, folded through the pure reducer.

import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import * as api from "./api";
import { parseTime, errorText } from "./format";
import { openRunStream, type ConnectionState, type RunStream } from "./sse";
import { initialRunState, reduce } from "./timeline/reducer";
import type { RunState } from "./timeline/state";
import type { Packet } from "./types";

export interface RunEntry {
  state: RunState;
  conn: ConnectionState;
  connDetail: string | null;
  /** Wall-clock start, for the live elapsed counter (server time if it told us). */
  startedAt: number;
}

export type ThreadItem =
  | { kind: "user"; content: string; runId: string | null }
  | { kind: "assistant"; content: string };

export interface SessionView {
  sessionId: string | null;
  title: string;
  loading: boolean;
  error: string | null;
  thread: ThreadItem[];
  runs: Record<string, RunEntry>;
}

const EMPTY: SessionView = { sessionId: null, title: "", loading: false, error: null, thread: [], runs: {} };

/** Messages + runs from the server -> thread items, each run placed after the message that started it. */
export function buildThread(detail: api.SessionDetail): ThreadItem[] {
  const items: ThreadItem[] = [];
  const placed = new Set<string>();
  for (const m of detail.messages) {
    if (m.role === "user") {
      items.push({ kind: "user", content: m.content, runId: m.runId });
      if (m.runId) placed.add(m.runId);
    } else if (!m.runId) {
      // Assistant text tied to a run is shown by that run's timeline instead.
      items.push({ kind: "assistant", content: m.content });
    }
  }
  for (const r of detail.runs) {
    if (!placed.has(r.id)) items.push({ kind: "user", content: "", runId: r.id });
  }
  return items;
}

/**
 * The open session. A new `reloadKey` (the user signed in again) loads it again and reopens the
 * run streams that failed meanwhile, from where they stopped.
 */
export function useSession(sessionId: string | null, reloadKey = 0) {
  const [view, setView] = useState<SessionView>(EMPTY);
  const streams = useRef(new Map<string, RunStream>());
  const failed = useRef(new Set<string>());
  const lastSeq = useRef(new Map<string, number>());
  const loadedFor = useRef<string | null>(null);

  const closeAll = () => {
    for (const s of streams.current.values()) s.close();
    streams.current.clear();
    failed.current.clear();
    lastSeq.current.clear();
  };

  const follow = useCallback((runId: string, startedAt: number | null) => {
    if (streams.current.has(runId) && !failed.current.has(runId)) return;
    failed.current.delete(runId);
    setView((v) => ({
      ...v,
      runs: {
        ...v.runs,
        [runId]: v.runs[runId] ?? { state: initialRunState(runId), conn: "connecting", connDetail: null, startedAt: startedAt ?? Date.now() },
      },
    }));
    const update = (fn: (e: RunEntry) => RunEntry) =>
      setView((v) => (v.runs[runId] ? { ...v, runs: { ...v.runs, [runId]: fn(v.runs[runId]) } } : v));
    const stream = openRunStream({
      runId,
      lastSeq: lastSeq.current.get(runId),
      onPacket: (p: Packet) => {
        lastSeq.current.set(runId, p.seq);
        update((e) => ({ ...e, state: reduce(e.state, p) }));
      },
      onState: (conn, detail) => {
        if (conn === "failed") failed.current.add(runId);
        update((e) => ({ ...e, conn, connDetail: detail ?? null }));
      },
    });
    streams.current.set(runId, stream);
  }, []);

  // Load (or replay) the session whenever the URL names another one.
  useEffect(() => {
    if (!sessionId) {
      closeAll();
      loadedFor.current = null;
      setView(EMPTY);
      return;
    }
    if (loadedFor.current !== sessionId) {
      closeAll();
      loadedFor.current = sessionId;
      setView({ ...EMPTY, sessionId, loading: true });
    }
    let cancelled = false;
    api
      .getSession(sessionId)
      .then((detail) => {
        if (cancelled || loadedFor.current !== sessionId) return;
        const serverThread = buildThread(detail);
        setView((v) => {
          // Keep local items for runs the server list does not know yet (just sent).
          const known = new Set(serverThread.map((i) => (i.kind === "user" ? i.runId : null)));
          const extra = v.thread.filter((i) => i.kind === "user" && i.runId && !known.has(i.runId));
          return { ...v, title: detail.title, loading: false, error: null, thread: [...serverThread, ...extra] };
        });
        // Newest run first: it is the one that may still be live.
        const runs = [...detail.runs].reverse();
        for (const r of runs) follow(r.id, parseTime(r.createdAt));
      })
      .catch((e: unknown) => {
        if (cancelled) return;
        setView((v) => ({ ...v, loading: false, error: errorText(e) }));
      });
    return () => {
      cancelled = true;
    };
  }, [sessionId, follow, reloadKey]);

  useEffect(() => closeAll, []);

  /** Send a message (a question, or the answer to a clarification) and follow its run. */
  const send = useCallback(
    async (content: string, opts: api.SendOptions, navigate: (id: string) => void): Promise<void> => {
      let sid = loadedFor.current;
      if (!sid) {
        const created = await api.createSession();
        sid = created.id;
        loadedFor.current = sid;
        setView({ ...EMPTY, sessionId: sid, title: created.title || content });
      }
      const { runId } = await api.sendMessage(sid, content, opts);
      setView((v) => ({ ...v, thread: [...v.thread, { kind: "user", content, runId }] }));
      follow(runId, Date.now());
      navigate(sid);
    },
    [follow],
  );

  return { view, send };
}

/** The thread's latest run, which drives the composer (busy / Stop) and the status line. */
export interface LatestRun {
  runId: string | null;
  entry: RunEntry | null;
  /** Running and still connected (or reconnecting): the composer offers Stop. */
  busy: boolean;
  /** It ended asking clarification questions: the next message answers them. */
  awaitingAnswer: boolean;
}

export function latestRun(view: Pick<SessionView, "thread" | "runs">): LatestRun {
  const runIds = view.thread.flatMap((i) => (i.kind === "user" && i.runId ? [i.runId] : []));
  const runId = runIds[runIds.length - 1] ?? null;
  const entry = runId ? view.runs[runId] ?? null : null;
  return {
    runId,
    entry,
    busy: !!entry && entry.state.status === "running" && entry.conn !== "failed",
    awaitingAnswer: !!entry && entry.state.status === "clarification",
  };
}

/** The status line: the connection's trouble if any, else the latest run's phase. */
export function statusLine(latest: LatestRun, loading: boolean, phase: (s: RunState) => string): string {
  if (latest.entry) return latest.entry.conn === "reconnecting" ? "Reconnecting…" : phase(latest.entry.state);
  return loading ? "Loading…" : "";
}
