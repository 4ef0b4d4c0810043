import { formatCost, formatElapsed, formatInt, modelLabel } from "../format";
import { useNow } from "../hooks";
import type { RunEntry } from "../session";
import { reportFirst as leadingReport } from "../timeline/digest";
import { allLanes, progressOf, timeLeftOf } from "../timeline/selectors";
import type { Block, RunState } from "../timeline/state";
import { ClarificationCard } from "./Clarification";
import { LanesRow } from "./Lanes";
import { Markdown } from "./Markdown";
import { NoticeView } from "./Notice";
import { PlanCard } from "./PlanCard";
import { ReportView } from "./Report";
import { Thinking } from "./Thinking";
import { Icon } from "./Icon";
import { TimelineFold } from "./TimelineFold";
import { AskReport } from "./AskReport";
import { AudioPlayer } from "./AudioPlayer";
import { FollowupAnswer } from "./FollowupAnswer";
import { RunSources } from "./SourcePicker";

interface Props {
  entry: RunEntry;
  /** Set only on the latest run when it ended asking for clarification. */
  onAnswer: ((text: string) => Promise<void>) | null;
  /** Ask a follow-up about this run's report (shown under a finished report). */
  onAsk?: ((question: string, reportId: string) => Promise<void>) | null;
}

/** One run's timeline: its turns top to bottom, then the summary. */
export function RunView({ entry, onAnswer, onAsk }: Props) {
  const s = entry.state;
  const lanes = allLanes(s);
  const key = s.runId ?? "run";
  // Once the report is verified it comes first; the way there folds into one line below it.
  const reportFirst = leadingReport(s);
  const turns = s.turns.map((t) => (
    <div class="turn" key={t.index} data-turn={t.index}>
      {t.blocks.map((b, i) =>
        b === reportFirst ? null : (
          <BlockView key={i} block={b} run={s} lanes={lanes} onAnswer={onAnswer} runKey={`${key}-${t.index}-${i}`} />
        ),
      )}
    </div>
  ));
  return (
    <div class="run" data-run={s.runId ?? undefined} data-status={s.status}>
      {/* A clarification that is no longer the latest run was answered by the next message. */}
      <ProgressLine entry={entry} answered={s.status === "clarification" && !onAnswer} />
      <ConnectionBanner entry={entry} />
      {reportFirst ? <ReportView block={reportFirst} run={s} /> : null}
      {reportFirst?.report ? <AudioPlayer reportId={reportFirst.report.reportId} /> : null}
      {reportFirst?.report && onAsk ? <AskReport reportId={reportFirst.report.reportId} onAsk={(q) => onAsk(q, reportFirst.report!.reportId)} /> : null}
      {reportFirst ? <TimelineFold run={s}>{turns}</TimelineFold> : turns}
      {s.status === "cancelled" ? <p class="run-end muted">Stopped.</p> : null}
      {s.summary && s.status !== "clarification" ? <SummaryBar run={s} /> : null}
    </div>
  );
}

function BlockView({ block, run, lanes, onAnswer, runKey }: { block: Block; run: RunState; lanes: ReturnType<typeof allLanes>; onAnswer: Props["onAnswer"]; runKey: string }) {
  switch (block.kind) {
    case "plan":
      return <PlanCard plan={block} lanes={lanes} runId={run.runId} live={run.status === "running"} />;
    case "thinking":
      return <Thinking block={block} />;
    case "lanes":
      return <LanesRow block={block} />;
    case "notice":
      return <NoticeView notice={block.notice} />;
    case "message":
      if (block.role === "clarification") {
        return <ClarificationCard block={block} onSubmit={onAnswer} runKey={runKey} />;
      }
      // A streaming message that has not become a report or clarification yet.
      if (!block.report && !block.draft && !block.done) return null;
      if (run.status === "clarification") return <Markdown markdown={block.draft} class="assistant" />;
      if (run.mode === "followup") return <FollowupAnswer block={block} run={run} />;
      return <ReportView block={block} run={run} />;
  }
}

const PHASE: Record<string, string> = {
  completed: "Done",
  clarification: "Waiting for your answers",
  cancelled: "Stopped",
  error: "Failed",
  deadline: "Ended at the deadline",
};

/** What the run is doing now, in a few words (also announced to screen readers). */
export function phaseOf(s: RunState): string {
  if (s.status !== "running") return PHASE[s.status] ?? s.status;
  const last = s.turns[s.turns.length - 1];
  const b = last?.blocks[last.blocks.length - 1];
  if (!b) return "Starting";
  if (b.kind === "plan") return b.review?.open ? "Waiting for your plan review" : b.done ? "Plan ready" : "Planning";
  if (b.kind === "thinking") return "Thinking";
  if (b.kind === "lanes") {
    const n = b.lanes.filter((l) => l.status === "running" || l.status === "pending").length;
    return n ? `Researching with ${n} agent${n === 1 ? "" : "s"}` : "Reviewing findings";
  }
  if (b.kind === "message") return b.report ? "Report ready" : "Writing the report";
  return "Working";
}

function ProgressLine({ entry, answered }: { entry: RunEntry; answered: boolean }) {
  const s = entry.state;
  const live = s.status === "running";
  const now = useNow(live);
  // Without a summary a finished run has no trustworthy duration: show none.
  const elapsed = s.summary ? s.summary.elapsedS : live ? Math.max(0, (now - entry.startedAt) / 1000) : null;
  const p = progressOf(s);
  const left = live && elapsed !== null ? timeLeftOf(s, elapsed) : null;
  const models = Array.from(new Set(Object.values(s.models)));
  return (
    <div class={`progress-line ${live ? "live" : ""}`}>
      {live ? <span class="spinner" aria-hidden="true" /> : null}
      <span class="phase">{answered ? "Asked for clarification" : phaseOf(s)}</span>
      {p.total ? (
        <span>
          Tasks {p.processed}/{p.total}
        </span>
      ) : null}
      {elapsed !== null ? (
        <span>
          <span class="sr-only">Elapsed </span>
          <Icon name="clock" /> {formatElapsed(elapsed)}
        </span>
      ) : null}
      {left !== null ? (
        <span class="time-left" title={`Time budget: ${formatElapsed(s.timeBudgetS ?? 0)}`}>
          {formatElapsed(Math.ceil(left))} left
        </span>
      ) : null}
      {live && s.usage.inputTokens + s.usage.outputTokens > 0 ? (
        <span class="muted">{formatInt(s.usage.inputTokens + s.usage.outputTokens)} tokens</span>
      ) : null}
      {s.mode ? <span class="muted">{s.mode}</span> : null}
      {models.length ? <span class="muted">{models.map(modelLabel).join(", ")}</span> : null}
      <RunSources names={s.sources} routes={s.routes} />
    </div>
  );
}

function ConnectionBanner({ entry }: { entry: RunEntry }) {
  if (entry.conn === "reconnecting") {
    return (
      <div class="conn-banner" role="status">
        <span class="spinner" aria-hidden="true" /> Connection lost, reconnecting… the run continues on the server.
      </div>
    );
  }
  if (entry.conn === "failed") {
    return (
      <div class="notice notice-error" role="alert">
        Could not load this run{entry.connDetail ? `: ${entry.connDetail}` : ""}.
      </div>
    );
  }
  return null;
}

function SummaryBar({ run }: { run: RunState }) {
  const m = run.summary!;
  return (
    <dl class="summary-bar" aria-label="Run summary">
      <div>
        <dt>Elapsed</dt>
        <dd>{formatElapsed(m.elapsedS)}</dd>
      </div>
      <div>
        <dt>Sources</dt>
        <dd>
          {formatInt(m.sourcesSeen)} seen · {formatInt(m.sourcesFetched)} read · {formatInt(m.sourcesCited)} cited
        </dd>
      </div>
      {m.claimsChecked ? (
        <div>
          <dt>Claims</dt>
          <dd>
            {formatInt(m.claimsChecked)} checked
            {m.claimsUnsupported ? <span class="claims-flagged"> · {formatInt(m.claimsUnsupported)} unsupported</span> : null}
          </dd>
        </div>
      ) : null}
      <div>
        <dt>Tokens</dt>
        <dd>
          {formatInt(m.inputTokens)} in · {formatInt(m.outputTokens)} out
        </dd>
      </div>
      <div>
        <dt>Cost</dt>
        <dd>{formatCost(m.costUsd)}</dd>
      </div>
    </dl>
  );
}
