import { useEffect, useState } from "preact/hooks";
import * as api from "../api";
import { runHash, scheduleHash, schedulesHash } from "../route";
import { countsText, describeTiming, firingResult, formatLocal } from "../schedules";
import { Icon } from "./Icon";
import { ResultTag, ScheduleActions, ScheduleSummary, usePolled } from "./Schedules";

/** One schedule: its summary and actions, then its runs as a timeline, newest first, each with what it found changed. */
export function ScheduleHistory({ scheduleId, onSessionsChanged }: { scheduleId: string; onSessionsChanged?: () => void }) {
  const { data: s, error, refresh: reload } = usePolled(() => api.getSchedule(scheduleId), scheduleId);
  const refresh = () => {
    reload();
    onSessionsChanged?.();
  };
  return (
    <div class="page schedule-page">
      <p class="page-back">
        <a href={schedulesHash()}>← All schedules</a>
      </p>
      {error ? (
        <p class="notice notice-error" role="alert">
          Could not load the schedule: {error}
        </p>
      ) : null}
      {s ? (
        <>
          <div class="schedule-card">
            <ScheduleSummary schedule={s} heading={s.question} />
            <ScheduleActions schedule={s} withHistory={false} onChanged={refresh} onDeleted={() => (window.location.hash = schedulesHash())} />
          </div>
          <h2 class="history-h">Runs</h2>
          {!s.firings.length ? <p class="muted">No runs yet: it runs at its next due time, or now with “Run now”.</p> : null}
          <ol class="firings" aria-label="Runs of this schedule, newest first">
            {s.firings.map((f) => (
              <FiringItem key={f.id} firing={f} sessionId={s.sessionId} />
            ))}
          </ol>
        </>
      ) : null}
    </div>
  );
}

function FiringItem({ firing: f, sessionId }: { firing: api.Firing; sessionId: string }) {
  const result = firingResult(f);
  return (
    <li class={`firing firing-${result.kind}`}>
      <span class="firing-dot" aria-hidden="true" />
      <div class="firing-body">
        <div class="firing-head">
          <time dateTime={f.firedAt}>{formatLocal(f.firedAt)}</time>
          <span class="muted small">{f.detail === "run now" ? "run now" : "scheduled"}</span>
          <ResultTag result={result} />
        </div>
        {f.changes ? <p class="firing-counts">{countsText(f.changes.counts)}</p> : null}
        <Delivery firing={f} />
        {result.kind === "first" ? <p class="firing-counts muted">The first run: later runs are compared with it.</p> : null}
        {f.runId && f.runStatus ? (
          <a class="firing-open" href={runHash(sessionId, f.runId)}>
            {f.runStatus === "running" ? "Watch the run" : f.reportId ? "Open the report" : "Open the run"}
          </a>
        ) : null}
      </div>
    </li>
  );
}

const DELIVERY: Partial<Record<api.Firing["delivery"], string>> = {
  pending: "to be sent once the run ends",
  sending: "sending",
  delivered: "delivered",
  failed: "failed",
  not_needed: "not sent: nothing changed",
};

/** Whether the webhook (and e-mail) went out for this run; nothing for a schedule that sends none. */
function Delivery({ firing: f }: { firing: api.Firing }) {
  const state = DELIVERY[f.delivery];
  if (!state) return null;
  return (
    <p class={`firing-delivery small ${f.delivery === "failed" ? "delivery-failed" : "muted"}`}>
      {f.delivery === "failed" ? <span aria-hidden="true">! </span> : null}
      Notification: {state}
      {f.deliveryDetail ? ` (${f.deliveryDetail})` : ""}
    </p>
  );
}

/** Above a schedule's session: which schedule makes its runs, with a way to its history. */
export function ScheduleBanner({ sessionId }: { sessionId: string | null }) {
  const [schedule, setSchedule] = useState<api.Schedule | null>(null);
  useEffect(() => {
    setSchedule(null);
    if (!sessionId) return;
    let live = true;
    api
      .listSchedules()
      .then((all) => live && setSchedule(all.find((s) => s.sessionId === sessionId) ?? null))
      .catch(() => undefined); // the session shows without it
    return () => {
      live = false;
    };
  }, [sessionId]);
  if (!schedule) return null;
  return (
    <p class="schedule-banner" role="note">
      <Icon name="clock" /> The runs here are made by a schedule: {describeTiming(schedule)}
      {schedule.paused ? " (paused)" : ""}. <a href={scheduleHash(schedule.id)}>Its history and what changed</a>
    </p>
  );
}
