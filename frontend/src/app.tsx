import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { BUDGET_KEY, parseBudget } from "./budget";
import * as api from "./api";
import { Composer } from "./components/Composer";
import { phaseOf, RunView } from "./components/RunView";
import { Sidebar } from "./components/Sidebar";
import { useHashSession } from "./hooks";
import { useSession, type RunEntry } from "./session";
import { Icon } from "./components/Icon";
import { TokenPrompt } from "./components/TokenPrompt";
import { onUnauthorized } from "./auth";
import { DocumentViewer } from "./components/DocumentViewer";
import { SourcePicker, useSourceChoice } from "./components/SourcePicker";

const EXAMPLES = [
  "How does Python decide where an attribute lookup like obj.x finds its value?",
  "What exactly happens when a generator is closed, and how do try/finally blocks behave?",
  "Compare __slots__, descriptors and __getattr__ for memory use and speed.",
];

export function App() {
  const [sessionId, navigate] = useHashSession();
  const { view, send } = useSession(sessionId);
  const [sessions, setSessions] = useState<api.SessionSummary[]>([]);
  const [sessionsError, setSessionsError] = useState<string | null>(null);
  const [navOpen, setNavOpen] = useState(false);
  const [preset, setPreset] = useState<{ text: string; nonce: number } | null>(null);
  const [stopError, setStopError] = useState<string | null>(null);
  const [needToken, setNeedToken] = useState(false);
  const [chosenSources, setChosenSources] = useSourceChoice(sessionId);
  useEffect(() => onUnauthorized(() => setNeedToken(true)), []);

  // Follow the live end of the thread while the reader is there; leave them alone once
  // they scroll up to read.
  const threadRef = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const lastHeight = useRef(0);
  const onThreadScroll = () => {
    const el = threadRef.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 120;
  };
  useLayoutEffect(() => {
    const el = threadRef.current;
    if (!el || el.scrollHeight === lastHeight.current) return;
    lastHeight.current = el.scrollHeight;
    if (stick.current) el.scrollTop = el.scrollHeight;
  });
  useEffect(() => {
    stick.current = true;
  }, [sessionId]);

  const [query, setQuery] = useState("");
  const refreshSessions = useCallback(() => {
    (query.trim() ? api.searchSessions(query.trim()) : api.listSessions())
      .then((s) => {
        setSessions(s);
        setSessionsError(null);
      })
      .catch((e: unknown) => setSessionsError(e instanceof Error ? e.message : String(e)));
  }, [query]);
  useEffect(refreshSessions, [refreshSessions]);

  // The latest run drives the composer (busy / Stop) and the status announcements.
  const runIds = view.thread.flatMap((i) => (i.kind === "user" && i.runId ? [i.runId] : []));
  const lastRunId = runIds[runIds.length - 1] ?? null;
  const last: RunEntry | null = lastRunId ? view.runs[lastRunId] ?? null : null;
  const busy = !!last && last.state.status === "running" && last.conn !== "failed";
  const awaitingAnswer = !!last && last.state.status === "clarification";

  // A run that ends changes its session's title / order in the list.
  const lastStatus = last?.state.status;
  // A reader who followed a run to its end sees the report from its title, not from its last line.
  useLayoutEffect(() => {
    if (lastStatus !== "completed" || !stick.current || !lastRunId) return;
    const run = threadRef.current?.querySelector<HTMLElement>(`.run[data-run="${CSS.escape(lastRunId)}"]`);
    if (run?.querySelector(".report")) run.scrollIntoView({ block: "start" });
  }, [lastStatus, lastRunId]);
  useEffect(() => {
    if (lastStatus && lastStatus !== "running") refreshSessions();
  }, [lastStatus, refreshSessions]);

  const sendMessage = async (text: string, mode: api.Mode, clarify: boolean, timeBudgetS: number | null, reviewPlan = false) => {
    setStopError(null);
    stick.current = true;
    await send(text, { mode, clarify, timeBudgetS, sources: chosenSources ?? undefined, reviewPlan }, navigate);
    refreshSessions();
  };
  // The answer starts the research itself, so it goes with the composer's chosen mode.
  const answer = async (text: string) => {
    const mode: api.Mode = localStorage.getItem("sleuth.mode") === "heavy" ? "heavy" : "light";
    const timeBudgetS = parseBudget(localStorage.getItem(BUDGET_KEY));
    stick.current = true;
    await send(text, { mode, timeBudgetS, sources: chosenSources ?? undefined }, navigate);
  };
  const askAbout = async (question: string, reportId: string) => {
    stick.current = true;
    await send(question, { followupOf: reportId }, navigate);
  };
  const stop = () => {
    if (!lastRunId) return;
    api.cancelRun(lastRunId).catch((e: unknown) => setStopError(e instanceof Error ? e.message : String(e)));
  };

  const status = last ? (last.conn === "reconnecting" ? "Reconnecting…" : phaseOf(last.state)) : view.loading ? "Loading…" : "";
  // The history has the newest title (a rename shows at once); the opened session's is the fallback.
  const title = sessions.find((s) => s.id === sessionId)?.title || view.title;
  useEffect(() => {
    document.title = title ? `${title} · Sleuth` : "Sleuth";
  }, [title]);

  return (
    <div class={`app ${navOpen ? "nav-open" : ""}`}>
      {needToken ? <TokenPrompt onSaved={() => window.location.reload()} /> : null}
      <a class="skip-link" href="#composer-input">
        Skip to the question box
      </a>
      <header class="topbar">
        <button type="button" class="btn btn-ghost nav-toggle" aria-expanded={navOpen} aria-controls="sidebar" onClick={() => setNavOpen(!navOpen)}>
          <span aria-hidden="true">☰</span>
          <span class="sr-only">Sessions</span>
        </button>
        <a class="brand" href="#/" onClick={() => navigate(null)}>
          <Icon name="logo" class="logo" /> Sleuth
        </a>
        <span class="topbar-title">{title}</span>
        <span class="spacer" />
        {status ? <span class={`status-pill ${last?.conn === "reconnecting" ? "warn" : busy ? "live" : ""}`}>{status}</span> : null}
      </header>
      {/* Announced to screen readers; changes only at phase boundaries, not per token. */}
      <div class="sr-only" role="status" aria-live="polite" aria-atomic="true">
        {status}
      </div>
      <div id="sidebar" class="sidebar-wrap">
        <Sidebar
          sessions={sessions}
          currentId={sessionId}
          error={sessionsError}
          onNew={() => {
            setNavOpen(false);
            navigate(null);
          }}
          onSelect={() => setNavOpen(false)}
          query={query}
          onSearch={setQuery}
          onRename={async (id, title) => {
            await api.renameSession(id, title);
            refreshSessions();
          }}
          onDelete={async (id) => {
            await api.deleteSession(id);
            if (id === sessionId) navigate(null);
            refreshSessions();
          }}
        />
      </div>
      <main class="main" id="main">
        <div class="thread" ref={threadRef} onScroll={onThreadScroll}>
          {view.error ? (
            <div class="notice notice-error" role="alert">
              Could not open this session: {view.error}
            </div>
          ) : null}
          {!sessionId && !view.thread.length ? <Welcome onPick={(text) => setPreset({ text, nonce: Date.now() })} /> : null}
          {view.loading ? <p class="muted">Loading session…</p> : null}
          {view.thread.map((item, i) => {
            if (item.kind === "assistant") {
              return (
                <div class="msg assistant" key={`a${i}`}>
                  {item.content}
                </div>
              );
            }
            const entry = item.runId ? view.runs[item.runId] : undefined;
            const question = item.content || entry?.state.question || "";
            const isLast = item.runId === lastRunId;
            return (
              <article class="exchange" key={item.runId ?? `u${i}`} aria-label={question ? `Question: ${question.slice(0, 80)}` : "Question"}>
                {question ? (
                  <div class="msg user">
                    <span class="sr-only">You asked: </span>
                    {question}
                  </div>
                ) : null}
                {entry ? <RunView entry={entry} onAnswer={isLast && awaitingAnswer ? answer : null} onAsk={busy ? null : askAbout} /> : null}
              </article>
            );
          })}
        </div>
        {stopError ? (
          <p class="notice notice-error" role="alert">
            Could not stop the run: {stopError}
          </p>
        ) : null}
        <Composer
          busy={busy}
          placeholder={awaitingAnswer ? "Answer the questions above, or reply in your own words…" : lastRunId ? "Ask a follow-up or a new question…" : "What should Sleuth research?"}
          onSend={sendMessage}
          onStop={busy ? stop : null}
          preset={preset}
          tools={<SourcePicker chosen={chosenSources} onChange={setChosenSources} disabled={busy} />}
        />
        <DocumentViewer />
      </main>
    </div>
  );
}

function Welcome({ onPick }: { onPick: (text: string) => void }) {
  return (
    <div class="welcome">
      <h1>What should Sleuth research?</h1>
      <p class="muted">
        Sleuth asks what it needs to know, writes a plan, sends up to three agents to search and read in parallel, and
        writes a report where every claim links to its source.
      </p>
      <ul class="examples" aria-label="Example questions">
        {EXAMPLES.map((q) => (
          <li key={q}>
            <button type="button" class="btn btn-ghost example" onClick={() => onPick(q)}>
              {q}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
