import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import * as api from "../api";
import { errorText } from "../format";
import { runHash, scheduleHash } from "../route";
import { describeTiming, firingResult, formatDue, formatLocal, type FiringResult } from "../schedules";
import { ScheduleForm } from "./ScheduleForm";

/** How often an open schedules page asks again: a firing may start or end meanwhile. */
const REFRESH_MS = 5000;

/** Load with `load`, again every few seconds while the page is shown; `refresh` reloads at once. */
export function usePolled<T>(load: () => Promise<T>, key: unknown) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const refresh = useCallback(() => {
    load()
      .then((d) => {
        setData(d);
        setError(null);
      })
      .catch((e: unknown) => setError(errorText(e)));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  useEffect(() => {
    setData(null);
    refresh();
    const t = setInterval(() => {
      if (document.visibilityState !== "hidden") refresh();
    }, REFRESH_MS);
    return () => clearInterval(t);
  }, [refresh]);
  return { data, error, refresh };
}

/** The schedules page: every schedule with its timing, next due time and last result, and a form to add one. */
export function SchedulesPage({ onSessionsChanged }: { onSessionsChanged?: () => void }) {
  const { data, error, refresh: reload } = usePolled(api.listSchedules, "all");
  // A new schedule brings its session, and a run moves it up the session list.
  const refresh = () => {
    reload();
    onSessionsChanged?.();
  };
  const [formOpen, setFormOpen] = useState(false);
  const [secret, setSecret] = useState<{ question: string; secret: string } | null>(null);
  const schedules = data ?? [];
  return (
    <div class="page schedules-page">
      <div class="page-head">
        <h1 class="page-title">Schedules</h1>
        <span class="spacer" />
        {!formOpen ? (
          <button type="button" class="btn btn-primary" onClick={() => setFormOpen(true)}>
            + New schedule
          </button>
        ) : null}
      </div>
      <p class="muted page-intro">
        A schedule asks its question again on a cron expression or an interval; each run&apos;s report opens with what changed since the run before.
      </p>
      {formOpen ? (
        <ScheduleForm
          onCreated={(created) => {
            setFormOpen(false);
            setSecret(created.webhookSecret ? { question: created.question, secret: created.webhookSecret } : null);
            refresh();
          }}
          onCancel={() => setFormOpen(false)}
        />
      ) : null}
      {secret ? <SecretNotice {...secret} onDone={() => setSecret(null)} /> : null}
      {error ? (
        <p class="notice notice-error" role="alert">
          Could not load the schedules: {error}
        </p>
      ) : null}
      {data && !schedules.length && !formOpen ? <p class="muted">No schedules yet.</p> : null}
      <ul class="schedule-list" aria-label="Schedules">
        {schedules.map((s) => (
          <li key={s.id} class={`schedule-card ${s.paused ? "paused" : ""}`}>
            <ScheduleSummary schedule={s} heading={<a href={scheduleHash(s.id)}>{s.question}</a>} />
            <ScheduleActions schedule={s} onChanged={refresh} />
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The schedule's question, timing, next due time and last result. */
export function ScheduleSummary({ schedule: s, heading }: { schedule: api.Schedule; heading: ComponentChildren }) {
  const due = formatDue(s.nextDueAt, s.timezone);
  const last = s.lastFiring;
  return (
    <div class="schedule-summary">
      <h2 class="schedule-question">{heading}</h2>
      <dl class="schedule-facts">
        <div>
          <dt>When</dt>
          <dd>{describeTiming(s)}</dd>
        </div>
        <div>
          <dt>Next</dt>
          <dd>
            {s.paused ? (
              <span class="badge badge-stopped">Paused</span>
            ) : due ? (
              <>
                <time dateTime={s.nextDueAt}>{due.local}</time>
                {due.there ? <span class="muted"> ({due.there})</span> : null}
              </>
            ) : (
              s.nextDueAt
            )}
          </dd>
        </div>
        <div>
          <dt>Last result</dt>
          <dd>
            <ResultTag result={firingResult(last)} />
            {last ? <span class="muted small"> {formatLocal(last.firedAt)}</span> : null}
            {last?.runId && last.runStatus ? (
              <>
                {" · "}
                <a href={runHash(s.sessionId, last.runId)}>{last.runStatus === "running" ? "Watch the run" : "Open the report"}</a>
              </>
            ) : null}
          </dd>
        </div>
      </dl>
    </div>
  );
}

const RESULT_ICON: Record<FiringResult["kind"], string> = {
  changed: "Δ",
  unchanged: "=",
  first: "•",
  running: "…",
  skipped: "⤼",
  failed: "!",
  none: "–",
};

/** A firing's result as a word with an icon (colour is a third cue, never the only one). */
export function ResultTag({ result }: { result: FiringResult }) {
  return (
    <span class={`result result-${result.kind}`} title={result.reason ?? undefined}>
      <span aria-hidden="true">{RESULT_ICON[result.kind]}</span> {result.label}
      {result.reason ? <span class="result-reason">: {result.reason}</span> : null}
    </span>
  );
}

/** Pause / resume, run now, and delete (asked again first); what the server refuses is shown here. */
export function ScheduleActions({
  schedule: s,
  onChanged,
  onDeleted,
  withHistory = true,
}: {
  schedule: api.Schedule;
  onChanged: () => void;
  onDeleted?: () => void;
  /** A link to the schedule's history (not on the history itself). */
  withHistory?: boolean;
}) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const act = async (what: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await what();
      onChanged();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  const running = s.lastFiring?.runStatus === "running";
  return (
    <div class="schedule-actions">
      <div class="actions">
        <button type="button" class="btn" disabled={busy} onClick={() => act(() => api.setSchedulePaused(s.id, !s.paused))}>
          {s.paused ? "Resume" : "Pause"}
        </button>
        <button
          type="button"
          class="btn"
          disabled={busy || running}
          title={running ? "Its previous run is still running" : undefined}
          onClick={() => act(() => api.runScheduleNow(s.id))}
        >
          Run now
        </button>
        {withHistory ? (
          <a class="btn btn-ghost" href={scheduleHash(s.id)}>
            History
          </a>
        ) : null}
        {confirming ? (
          <span class="session-confirm" role="group" aria-label="Confirm deletion">
            <span>Delete this schedule? Its reports stay in the history.</span>
            <button
              type="button"
              class="btn btn-danger"
              disabled={busy}
              onClick={() =>
                act(async () => {
                  await api.deleteSchedule(s.id);
                  setConfirming(false);
                  onDeleted?.();
                })
              }
            >
              Delete
            </button>
            <button type="button" class="btn btn-ghost" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </span>
        ) : (
          <button type="button" class="btn btn-ghost" disabled={busy} onClick={() => setConfirming(true)}>
            Delete…
          </button>
        )}
      </div>
      {error ? (
        <p class="notice notice-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** The webhook's signing secret, which the server gives out once, when the schedule is made. */
function SecretNotice({ question, secret, onDone }: { question: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="notice notice-info secret-notice" role="status">
      <p>
        Webhook deliveries of “{question}” are signed with this secret (<code>X-Sleuth-Signature</code>). Keep it now: it is not shown again.
      </p>
      <p class="secret-row">
        <code class="secret">{secret}</code>
        <button
          type="button"
          class="btn btn-small"
          onClick={() =>
            navigator.clipboard
              .writeText(secret)
              .then(() => setCopied(true))
              .catch(() => setCopied(false))
          }
        >
          {copied ? "Copied" : "Copy"}
        </button>
        <button type="button" class="btn btn-ghost btn-small" onClick={onDone}>
          I have kept it
        </button>
      </p>
    </div>
  );
}
