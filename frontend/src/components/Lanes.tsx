import type { Lane, LanesBlock, Step } from "../timeline/state";
import { Markdown } from "./Markdown";
import { NoticeView } from "./Notice";
import { SourceTitle } from "./SourceItem";
import { Icon } from "./Icon";

const STATUS: Record<Lane["status"], { text: string; icon: string }> = {
  pending: { text: "starting", icon: "…" },
  running: { text: "running", icon: "" },
  done: { text: "done", icon: "✓" },
  failed: { text: "failed", icon: "✕" },
  timed_out: { text: "timed out", icon: "" },
  stopped: { text: "stopped", icon: "■" },
};

/** The lanes of one cycle side by side (a grid that stacks on narrow screens). */
export function LanesRow({ block }: { block: LanesBlock }) {
  const running = block.lanes.filter((l) => l.status === "running" || l.status === "pending").length;
  return (
    <section class="lanes-block" aria-label={`${block.lanes.length} parallel research agents`}>
      <h3 class="lanes-title">
        {block.lanes.length === 1 ? "1 research agent" : `${block.lanes.length} research agents in parallel`}
        {running ? <span class="muted"> · {running} running</span> : null}
      </h3>
      <div class="lanes" style={{ "--lanes": String(Math.min(3, block.lanes.length)) }}>
        {block.lanes.map((l) => (
          <LaneCard key={l.tab} lane={l} />
        ))}
      </div>
    </section>
  );
}

function LaneCard({ lane }: { lane: Lane }) {
  const st = STATUS[lane.status];
  const docs = lane.report?.documents ?? [];
  return (
    <article class={`lane status-${lane.status}`} aria-label={`Agent ${lane.tab + 1}: ${lane.task || "starting"}`}>
      <header class="lane-head">
        <span class="lane-n">Agent {lane.tab + 1}</span>
        <span class={`badge badge-${lane.status}`}>
          {lane.status === "running" ? (
            <span class="spinner" aria-hidden="true" />
          ) : lane.status === "timed_out" ? (
            <Icon name="clock" />
          ) : (
            <span aria-hidden="true">{st.icon}</span>
          )}
          {st.text}
        </span>
      </header>
      <p class="lane-task" title={lane.task || undefined}>
        {lane.task || "Waiting for the agent to start…"}
      </p>
      {lane.steps.length ? (
        <ol class="lane-steps" tabIndex={0} aria-label={`Steps of agent ${lane.tab + 1}`}>
          {lane.steps.map((s) => (
            <StepView key={s.index} step={s} known={lane.steps} />
          ))}
        </ol>
      ) : null}
      {lane.notices.map((n) => (
        <NoticeView key={n.seq} notice={n} compact />
      ))}
      {lane.report && lane.report.content ? (
        <details class="lane-report" open={false}>
          <summary>
            Findings{lane.status === "running" ? " (writing…)" : ""}
            {docs.length ? <span class="muted"> · {docs.length} cited</span> : null}
          </summary>
          {/* Agent-local [n] numbers stay text: the numbered list below resolves them. */}
          <Markdown markdown={lane.report.content} />
          {docs.length ? (
            <ol class="lane-cited" aria-label="Cited by this agent">
              {docs.map((d) => (
                <li key={d.id}>
                  <SourceTitle doc={d} />
                </li>
              ))}
            </ol>
          ) : null}
        </details>
      ) : null}
    </article>
  );
}

const MAX_RESULTS = 5;

/** A page being opened is usually a result of an earlier search: show its title early. */
function titleFor(url: string, steps: Step[]): string {
  for (const st of steps) for (const d of st.documents) if (d.url === url && d.title) return d.title;
  return "";
}

function StepView({ step, known }: { step: Step; known: Step[] }) {
  if (step.kind === "search") {
    const extra = step.documents.length - MAX_RESULTS;
    return (
      <li class="step step-search">
        <div class="step-line">
          <Icon name="search" class="step-icon" />
          <span>
            Searched{step.provider ? ` ${step.provider}` : ""}
            {step.queries.length ? ": " : step.done ? "" : "…"}
            {step.queries.map((q, i) => (
              <q key={i} class="query">
                {q}
              </q>
            ))}
          </span>
        </div>
        {step.documents.length ? (
          <ul class="results" aria-label="Results">
            {step.documents.slice(0, MAX_RESULTS).map((d) => (
              <li key={d.id}>
                <SourceTitle doc={d} />
              </li>
            ))}
            {extra > 0 ? <li class="muted">+{extra} more</li> : null}
          </ul>
        ) : step.done ? (
          <p class="muted small">No results.</p>
        ) : null}
      </li>
    );
  }
  if (step.kind === "open_url") {
    const items = step.documents.length ? step.documents : step.urls.map((u) => ({ id: u, url: u, title: titleFor(u, known) }));
    return (
      <li class="step step-open">
        <div class="step-line">
          <Icon name="page" class="step-icon" />
          <span>{step.done ? `Read ${items.length} page${items.length === 1 ? "" : "s"}` : "Opening…"}</span>
        </div>
        {items.length ? (
          <ul class="results">
            {items.map((d) => (
              <li key={d.id}>
                <SourceTitle doc={d} />
              </li>
            ))}
          </ul>
        ) : null}
      </li>
    );
  }
  if (step.kind === "reasoning") {
    return (
      <li class="step step-reasoning">
        <details>
          <summary>
            <Icon name="thought" class="step-icon" /> {step.done ? "Reasoned" : "Reasoning…"}
          </summary>
          <p class="thinking-text">{step.reasoning}</p>
        </details>
      </li>
    );
  }
  return null;
}
