import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { BUDGET_KEY, parseBudget } from "./budget";
import * as api from "./api";
import { Composer } from "./components/Composer";
import { phaseOf } from "./components/RunView";
import { reportFirst } from "./timeline/digest";
import { Sidebar } from "./components/Sidebar";
import { useFollowEnd, useHashRoute, useReadiness, useSessionList } from "./hooks";
import { SchedulesPage } from "./components/Schedules";
import { ScheduleBanner, ScheduleHistory } from "./components/ScheduleHistory";
import { latestRun, statusLine, useSession } from "./session";
import { DocumentViewer } from "./components/DocumentViewer";
import { SourcePicker, useSourceChoice } from "./components/SourcePicker";
import { errorText } from "./format";
import { Thread } from "./components/Thread";
import { TopBar, type TopBarAccount } from "./components/TopBar";
import { ApiKeys } from "./components/ApiKeys";
import { PasswordChange } from "./components/PasswordChange";
import { warmupText } from "./warmup";
import { pageTitle } from "./route";

/**
 * The page: the session list, the open session's thread, and the composer under it (or the
 * schedules, a schedule's history, or the API keys page). `account`: the signed-in user, where users sign in. `signIns` changes when the user
 * signs in again: what failed meanwhile is loaded again. `covered`: a prompt is over the page.
 */
export function App({
  account = null,
  signIns = 0,
  covered = false,
}: {
  account?: (TopBarAccount & { isAdmin: boolean; hasPassword?: boolean }) | null;
  signIns?: number;
  covered?: boolean;
}) {
  const [route, navigate] = useHashRoute();
  const keysPage = route.page === "keys" && !!account;
  // Without accounts there are no keys: #/keys shows the research page.
  const page = route.page === "keys" && !account ? "session" : route.page;
  const sessionId = route.page === "session" ? route.sessionId : null;
  const focusRunId = route.page === "session" ? route.runId : null;
  const { view, send } = useSession(sessionId, signIns);
  const [query, setQuery] = useState("");
  const list = useSessionList(query);
  const [navOpen, setNavOpen] = useState(false);
  const [preset, setPreset] = useState<{ text: string; nonce: number } | null>(null);
  const [stopError, setStopError] = useState<string | null>(null);
  const [chosenSources, setChosenSources] = useSourceChoice(sessionId);
  const thread = useFollowEnd<HTMLDivElement>(sessionId);
  const readiness = useReadiness();

  const latest = latestRun(view);
  const { busy, awaitingAnswer } = latest;
  const lastStatus = latest.entry?.state.status;
  const lastRunId = latest.runId;
  // A reader who followed a run to its end sees the report from its title, not from its last line.
  useLayoutEffect(() => {
    if (lastStatus !== "completed" || !thread.isFollowing() || !lastRunId) return;
    const run = thread.ref.current?.querySelector<HTMLElement>(`.run[data-run="${CSS.escape(lastRunId)}"]`);
    if (run?.querySelector(".report")) run.scrollIntoView({ block: "start" });
  }, [lastStatus, lastRunId]);
  // A link to one run of a session (a schedule's history) brings that run into view once it is there.
  const focused = useRef<string | null>(null);
  useEffect(() => {
    if (!focusRunId) focused.current = null;
  }, [focusRunId]);
  const focusEntry = focusRunId ? view.runs[focusRunId] : undefined;
  // A finished run is in place once its replay has ended; a live one as soon as it has started.
  const focusReady = !!focusEntry && focusEntry.state.lastSeq >= 0 && (focusEntry.state.status !== "running" || focusEntry.conn === "live");
  useLayoutEffect(() => {
    if (!focusRunId || !focusReady || focused.current === focusRunId) return;
    const run = thread.ref.current?.querySelector<HTMLElement>(`.run[data-run="${CSS.escape(focusRunId)}"]`);
    if (!run) return;
    focused.current = focusRunId;
    thread.release();
    run.scrollIntoView({ block: "start" });
  });
  // A schedule's session appears in the list once the schedule is made: look again on leaving or entering its pages.
  const lastPage = useRef(route.page);
  useEffect(() => {
    if (lastPage.current === route.page) return;
    lastPage.current = route.page;
    list.refresh();
  }, [route.page, list.refresh]);
  // A run that ends changes its session's title / order in the list.
  useEffect(() => {
    if (lastStatus && lastStatus !== "running") list.refresh();
  }, [lastStatus, list.refresh]);
  // The history has the newest title (a rename shows at once); the opened session's is the fallback.
  // Without accounts there is no keys page: #/keys shows the research page, under its title.
  const shown = route.page === "keys" && !keysPage ? ({ page: "session", sessionId, runId: null } as const) : route;
  const title = pageTitle(shown, list.sessions.find((s) => s.id === sessionId)?.title || view.title);
  useEffect(() => {
    document.title = title ? `${title} · Sleuth` : "Sleuth";
  }, [title]);
  const firstSignIns = useRef(signIns);
  useEffect(() => {
    if (signIns !== firstSignIns.current) list.refresh();
  }, [signIns]);

  const sources = chosenSources ?? undefined;
  const sendMessage = async (text: string, mode: api.Mode, clarify: boolean, timeBudgetS: number | null, reviewPlan = false) => {
    setStopError(null);
    thread.follow();
    await send(text, { mode, clarify, timeBudgetS, sources, reviewPlan }, navigate);
    list.refresh();
  };
  // The answer starts the research itself, so it goes with the composer's chosen mode.
  const answer = async (text: string) => {
    const mode: api.Mode = localStorage.getItem("sleuth.mode") === "heavy" ? "heavy" : "light";
    thread.follow();
    await send(text, { mode, timeBudgetS: parseBudget(localStorage.getItem(BUDGET_KEY)), sources }, navigate);
  };
  const askAbout = async (question: string, reportId: string) => {
    thread.follow();
    await send(question, { followupOf: reportId }, navigate);
  };
  const stop = () => {
    if (latest.runId) api.cancelRun(latest.runId).catch((e: unknown) => setStopError(errorText(e)));
  };

  const status = statusLine(latest, view.loading, phaseOf);
  // The box at the bottom always starts new research (or answers clarification); a follow-up about a
  // report is asked in the box under that report.
  const placeholder = awaitingAnswer
    ? "Answer the questions above, or reply in your own words…"
    : latest.runId
      ? "Ask a new research question…"
      : "What should Sleuth research?";
  const canFollowUp = !busy && !awaitingAnswer && Object.values(view.runs).some((r) => reportFirst(r.state)?.report);
  const toFollowUp = () => {
    const boxes = thread.ref.current?.querySelectorAll<HTMLInputElement>("form.ask-report input");
    const box = boxes?.[boxes.length - 1];
    box?.scrollIntoView({ block: "center" });
    box?.focus();
  };

  return (
    <div class={`app ${navOpen ? "nav-open" : ""}`} inert={covered}>
      {keysPage ? null : (
        <a class="skip-link" href="#composer-input">
          Skip to the question box
        </a>
      )}
      <TopBar
        title={title}
        status={status}
        tone={latest.entry?.conn === "reconnecting" ? "warn" : busy ? "live" : ""}
        navOpen={navOpen}
        onToggleNav={() => setNavOpen(!navOpen)}
        onHome={() => navigate(null)}
        account={account ? { ...account, onKeysPage: keysPage } : null}
        schedulesOpen={route.page === "schedules" || route.page === "schedule"}
      />
      <div id="sidebar" class="sidebar-wrap">
        <Sidebar
          sessions={list.sessions}
          currentId={sessionId}
          error={list.error}
          onNew={() => {
            setNavOpen(false);
            navigate(null);
          }}
          onSelect={() => setNavOpen(false)}
          query={query}
          onSearch={setQuery}
          onRename={async (id, title) => {
            await api.renameSession(id, title);
            list.refresh();
          }}
          onDelete={async (id) => {
            await api.deleteSession(id);
            if (id === sessionId) navigate(null);
            list.refresh();
          }}
        />
      </div>
      <main class="main" id="main">
        {keysPage ? (
          <div class="thread">
            <ApiKeys>{account?.hasPassword ? <PasswordChange /> : null}</ApiKeys>
          </div>
        ) : null}
        {route.page === "schedules" ? <SchedulesPage onSessionsChanged={list.refresh} /> : null}
        {route.page === "schedule" ? <ScheduleHistory scheduleId={route.scheduleId} onSessionsChanged={list.refresh} /> : null}
        {page !== "session" ? null : (
          <>
            <ScheduleBanner sessionId={sessionId} />
            <Thread
              view={view}
              latestRunId={latest.runId}
              scroller={thread}
              showWelcome={!sessionId && !view.thread.length}
              onPick={(text) => setPreset({ text, nonce: Date.now() })}
              onAnswer={awaitingAnswer ? answer : null}
              onAsk={busy ? null : askAbout}
            />
            {stopError ? (
              <p class="notice notice-error" role="alert">
                Could not stop the run: {stopError}
              </p>
            ) : null}
            <Composer
              busy={busy}
              placeholder={placeholder}
              onSend={sendMessage}
              onStop={busy ? stop : null}
              preset={preset}
              waiting={warmupText(readiness)}
              tools={
                <SourcePicker chosen={chosenSources} onChange={setChosenSources} disabled={busy} />
              }
              note={
                canFollowUp ? (
                  <>
                    This box starts new research.{" "}
                    <button type="button" class="btn-link" onClick={toFollowUp}>
                      Ask a follow-up about the report
                    </button>{" "}
                    in the box under it instead.
                  </>
                ) : null
              }
            />
          </>
        )}
        <DocumentViewer />
      </main>
    </div>
  );
}
