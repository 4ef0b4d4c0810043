// Timeline state: what one run's packets add up to. Plain data, built only by the reducer.

import type { ChangeSet, DegradedLevel, Document, KeyFinding, MethodNote, NumberedSource, StopReason, UnsupportedClaim } from "../types";

export interface Notice {
  seq: number;
  /** `error` packets and `degraded` packets both become notices, where they happened. */
  kind: "error" | "degraded";
  level?: DegradedLevel;
  message: string;
  recoverable?: boolean;
}

export type StepKind = "search" | "open_url" | "reasoning" | "other";

/** One tool call of a research agent (one `sub_turn_index`). */
export interface Step {
  index: number;
  kind: StepKind;
  provider?: string;
  queries: string[];
  /** Search results or opened pages. */
  documents: Document[];
  urls: string[];
  reasoning: string;
  done: boolean;
}

export type LaneStatus = "pending" | "running" | "done" | "failed" | "timed_out" | "stopped";

export interface IntermediateReport {
  content: string;
  documents: Document[];
}

/** One parallel research agent (one `tab_index` of a branching turn). */
export interface Lane {
  tab: number;
  task: string;
  status: LaneStatus;
  steps: Step[];
  report: IntermediateReport | null;
  notices: Notice[];
  /** The agent was told to stop researching and write its report (agent_force_report). */
  forced: boolean;
}

export interface PlanBlock {
  kind: "plan";
  content: string;
  /** Parsed steps from `plan_done`; null while the plan still streams. */
  steps: string[] | null;
  done: boolean;
  /** Set by `plan_review` / `plan_reviewed` when the run asks the user about this plan. */
  review?: PlanReviewState;
}

export interface PlanReviewState {
  /** True while the run waits for an answer. */
  open: boolean;
  round: number;
  maxRounds: number;
  outcome: "approved" | "edited" | "revising" | "timeout" | null;
}

export interface ThinkingBlock {
  kind: "thinking";
  text: string;
  done: boolean;
}

export interface LanesBlock {
  kind: "lanes";
  expected: number;
  lanes: Lane[];
}

export interface VerifiedReport {
  reportId: string;
  title: string;
  summary: string;
  keyFindings: KeyFinding[];
  method: MethodNote | null;
  markdown: string;
  sources: NumberedSource[];
  removed: { marker: string; reason: string }[];
  /** Citations whose source does not appear to say what their sentence says. */
  unsupported: UnsupportedClaim[];
  /** A scheduled run's diff with its schedule's previous run; null for any other run. */
  changes?: ChangeSet | null;
}

/** Streamed assistant text: the final report draft or the clarification questions. */
export interface MessageBlock {
  kind: "message";
  role: "report" | "clarification";
  draft: string;
  documents: Document[];
  questions: string[];
  /** Replaces the draft once the verified `report` packet arrives. */
  report: VerifiedReport | null;
  done: boolean;
}

export interface NoticeBlock {
  kind: "notice";
  notice: Notice;
}

export type Block = PlanBlock | ThinkingBlock | LanesBlock | MessageBlock | NoticeBlock;

/** A vertical block of the timeline (`turn_index`); its blocks keep arrival order. */
export interface Turn {
  index: number;
  blocks: Block[];
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface Summary {
  elapsedS: number;
  sourcesSeen: number;
  sourcesFetched: number;
  sourcesCited: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  reportId: string | null;
  claimsChecked: number;
  claimsUnsupported: number;
}

export interface Citation {
  number: number;
  documentId: string;
  url: string;
  title: string;
}

export type RunStatus = "running" | StopReason;

/** One local collection the question's searches go to, or leave out, and why. */
export interface SourceRoute {
  name: string;
  searched: boolean;
  reason: string;
}

export interface RunState {
  runId: string | null;
  /** Highest `seq` applied; packets at or below it are duplicates (replayed after a resume). */
  lastSeq: number;
  sessionId: string | null;
  question: string;
  mode: string | null;
  models: Record<string, string>;
  /** The run's effective time budget in seconds (from `run_start`); null for runs that did not say. */
  timeBudgetS: number | null;
  /** The source names this run searches (`run_start.sources`). */
  sources: string[];
  /** How the question was routed among the local collections (`run_start.routes`); empty when sources were chosen. */
  routes: SourceRoute[];
  status: RunStatus;
  turns: Turn[];
  progress: { processed: number; total: number } | null;
  usage: Usage;
  summary: Summary | null;
  citations: Record<number, Citation>;
  /** Every document any tool returned, by id, in the order first seen. */
  documents: Record<string, Document>;
  seenOrder: string[];
  /** Ids of documents whose page was opened. */
  fetched: Record<string, true>;
  reportId: string | null;
}

export function initialRunState(runId: string | null = null): RunState {
  return {
    runId,
    lastSeq: -1,
    sessionId: null,
    question: "",
    mode: null,
    models: {},
    timeBudgetS: null,
    sources: [],
    routes: [],
    status: "running",
    turns: [],
    progress: null,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    summary: null,
    citations: {},
    documents: {},
    seenOrder: [],
    fetched: {},
    reportId: null,
  };
}
