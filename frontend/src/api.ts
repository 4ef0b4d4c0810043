// Every HTTP call the UI makes, in one place: the server's snake_case bodies become the UI's
// camelCase types here and nowhere else. The bodies' types are generated from the server's
// OpenAPI schema (rest.gen.ts, by scripts/gen-types), so a change on the server that the UI does
// not follow fails its type check.

import { authHeaders, reportUnauthorized } from "./auth";
import type * as R from "./rest.gen";
import type { ChangeCounts } from "./types";
import type { Readiness } from "./warmup";

export type Mode = NonNullable<R.MessageCreate["mode"]>;

export interface SessionSummary {
  id: string;
  title: string;
  createdAt: string | null;
  updatedAt: string | null;
}

export interface SessionMessage {
  role: R.MessageOut["role"];
  content: string;
  runId: string | null;
}

export interface SessionRun {
  id: string;
  status: R.RunOut["status"];
  createdAt: string | null;
}

export interface SessionDetail extends SessionSummary {
  messages: SessionMessage[];
  runs: SessionRun[];
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** The body's `detail` as sent: a sentence, or request validation's list of errors by field. */
    readonly detail: unknown = null,
  ) {
    super(message);
  }
}

const BASE = "/api";

/**
 * Throw an ApiError carrying the server's `detail` for a response that failed, and report a 401
 * (the page asks for a sign-in or a token) unless the caller handles it itself.
 */
async function refuseFailure(res: Response, report401 = true): Promise<void> {
  if (res.status === 401 && report401) reportUnauthorized();
  if (res.ok) return;
  let message = `${res.status} ${res.statusText}`;
  let detail: unknown = null;
  try {
    const body = await res.json();
    detail = body?.detail ?? null;
    if (typeof detail === "string") message = detail;
    else if (body && typeof body.message === "string") message = body.message;
  } catch {
    /* not JSON */
  }
  throw new ApiError(message, res.status, detail);
}

async function call<T>(path: string, init?: RequestInit, report401 = true): Promise<T> {
  const res = await fetch(BASE + path, {
    ...init,
    headers: {
      Accept: "application/json",
      ...(init?.body ? { "Content-Type": "application/json" } : {}),
      ...authHeaders(init?.method),
      ...init?.headers,
    },
  });
  await refuseFailure(res, report401);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** A request body as JSON, checked against the server's schema for it. */
const json = <T>(body: T): string => JSON.stringify(body);

function toSummary(raw: R.SessionOut): SessionSummary {
  return { id: raw.id, title: raw.title, createdAt: raw.created_at, updatedAt: raw.updated_at };
}

export async function listSessions(): Promise<SessionSummary[]> {
  return (await call<R.SessionOut[]>("/sessions")).map(toSummary);
}

/** The server names the session (from its first message); an empty body is sent. */
export async function createSession(): Promise<SessionSummary> {
  return toSummary(await call<R.SessionOut>("/sessions", { method: "POST", body: json<R.SessionCreate>({}) }));
}

export async function getSession(id: string): Promise<SessionDetail> {
  const raw = await call<R.SessionDetail>(`/sessions/${encodeURIComponent(id)}`);
  const messages = raw.messages.map((m) => ({ role: m.role, content: m.content, runId: m.run_id }));
  const runs = raw.runs.map((r) => ({ id: r.id, status: r.status, createdAt: r.created_at }));
  return { ...toSummary(raw), messages, runs };
}

export interface SendOptions {
  mode?: Mode;
  clarify?: boolean;
  /** Seconds the run may take; unset: the mode's default budget. */
  timeBudgetS?: number | null;
  /** Source names from `listSources`; unset searches the server's defaults. */
  sources?: string[];
  /** Wait after the plan for the user's approval, edits or feedback. */
  reviewPlan?: boolean;
  /** Answer from this report and its sources instead of researching. */
  followupOf?: string;
}

export async function sendMessage(sessionId: string, content: string, opts: SendOptions = {}): Promise<{ runId: string }> {
  const body = await call<R.RunCreated>(`/sessions/${encodeURIComponent(sessionId)}/messages`, {
    method: "POST",
    body: json<R.MessageCreate>({
      content,
      mode: opts.mode,
      clarify: opts.clarify,
      time_budget_s: opts.timeBudgetS ?? undefined,
      sources: opts.sources?.length ? opts.sources : undefined,
      review_plan: opts.reviewPlan || undefined,
      followup: opts.followupOf ? true : undefined,
      report_id: opts.followupOf,
    }),
  });
  if (!body.run_id) throw new ApiError("server returned no run_id", 500);
  return { runId: body.run_id };
}

export async function cancelRun(runId: string): Promise<void> {
  await call<R.CancelOut>(`/runs/${encodeURIComponent(runId)}/cancel`, { method: "POST" });
}

export interface SourceInfo {
  name: string;
  kind: R.SourceOut["kind"];
  documents: number | null;
  default: boolean;
  /** MCP servers: the tools agents see (once ready), and whether runs can use it. */
  tools: number | null;
  state: R.SourceOut["state"];
  reason: string | null;
  /** Local collections: who sees it (`private`: the caller alone; `shared`: an administrator shared it). */
  visibility?: R.SourceOut["visibility"];
  /** Local collections: whether the caller may add files to it. */
  editable?: boolean | null;
}

/** Whether the server can run research at once (`/api/health`, open without a token). */
export async function getReadiness(): Promise<Readiness> {
  const raw = await call<R.HealthOut>("/health");
  return { ready: raw.ready, engines: raw.engines, enginesReady: raw.engines_ready };
}

export async function listSources(): Promise<SourceInfo[]> {
  const body = await call<R.SourceOut[]>("/sources");
  return body.map((s) => ({
    name: s.name,
    kind: s.kind,
    documents: s.documents ?? null,
    default: s.default,
    tools: s.tools ?? null,
    state: s.state ?? null,
    reason: s.reason ?? null,
    visibility: s.visibility ?? null,
    editable: s.editable ?? null,
  }));
}

export interface CollectionInfo {
  name: string;
  kind: string;
  documents: number;
}

export async function listCollections(): Promise<CollectionInfo[]> {
  const body = await call<R.CollectionOut[]>("/collections");
  return body.map((c) => ({ name: c.name, kind: c.kind, documents: c.documents }));
}

export type OpenedDocument = R.DocumentOut;

/** A document's text and its blocks to read (`GET /api/documents?url=`), in the session that read it. */
export async function getDocument(url: string, sessionId: string | null = null): Promise<OpenedDocument> {
  const session = sessionId ? `&session_id=${encodeURIComponent(sessionId)}` : "";
  const raw = await call<R.DocumentOut>(`/documents?url=${encodeURIComponent(url)}${session}`);
  return { ...raw, url: raw.url || url };
}

/**
 * Upload one file into a collection (created if new). XMLHttpRequest rather than fetch: it is
 * the one browser API that reports upload progress.
 */
export function uploadFile(collection: string, file: File, onProgress: (fraction: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${BASE}/collections/${encodeURIComponent(collection)}/documents`);
    for (const [k, v] of Object.entries(authHeaders("POST"))) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status === 401) reportUnauthorized();
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve();
        return;
      }
      let detail = `${xhr.status} ${xhr.statusText}`;
      try {
        const body = JSON.parse(xhr.responseText);
        if (body && typeof body.detail === "string") detail = body.detail;
      } catch {
        /* not JSON */
      }
      reject(new ApiError(detail, xhr.status));
    };
    xhr.onerror = () => reject(new ApiError("network error while uploading", 0));
    const form = new FormData();
    form.append("files", file, file.name);
    xhr.send(form);
  });
}

export function reportMarkdownUrl(reportId: string): string {
  return `${BASE}/reports/${encodeURIComponent(reportId)}.md`;
}

export type PlanAnswer = { approve: true } | { steps: string[] } | { feedback: string };

/** Answer a run's plan review (approve, edited steps, or feedback for a revision). */
export async function answerPlan(runId: string, answer: PlanAnswer): Promise<void> {
  await call<R.PlanAnswerOut>(`/runs/${encodeURIComponent(runId)}/plan`, {
    method: "POST",
    body: json<R.PlanAnswerIn>(answer),
  });
}

export async function renameSession(id: string, title: string): Promise<SessionSummary> {
  return toSummary(
    await call<R.SessionOut>(`/sessions/${encodeURIComponent(id)}`, { method: "PATCH", body: json<R.SessionUpdate>({ title }) }),
  );
}

/** Deletes the session with its runs, reports and audio. */
export async function deleteSession(id: string): Promise<void> {
  await call<unknown>(`/sessions/${encodeURIComponent(id)}`, { method: "DELETE" });
}

export async function searchSessions(query: string): Promise<SessionSummary[]> {
  return (await call<R.SessionOut[]>(`/sessions?q=${encodeURIComponent(query)}`)).map(toSummary);
}

export type ExportFormat = "md" | "pdf" | "docx";

/** The stored report rendered by the server as a file (fetched with the token, so it works behind auth). */
export async function fetchReportFile(reportId: string, format: ExportFormat): Promise<Blob> {
  const res = await fetch(`${BASE}/reports/${encodeURIComponent(reportId)}.${format}`, { headers: { ...authHeaders() } });
  await refuseFailure(res);
  return await res.blob();
}

export type AudioStyle = NonNullable<R.AudioCreate["style"]>;

export interface AudioStatus {
  audioId: string;
  status: R.AudioOut["status"];
  url: string | null;
  error: string | null;
  durationS: number | null;
  /** While pending: writing the script, or speaking line `done` of `total`. */
  progress: R.AudioProgress | null;
}

function toAudio(raw: R.AudioOut): AudioStatus {
  return {
    audioId: raw.audio_id,
    status: raw.status,
    url: raw.url ?? null,
    error: raw.error ?? null,
    durationS: raw.duration_s ?? null,
    progress: raw.progress ?? null,
  };
}

export async function startAudio(reportId: string, style: AudioStyle): Promise<AudioStatus> {
  return toAudio(
    await call<R.AudioOut>(`/reports/${encodeURIComponent(reportId)}/audio`, { method: "POST", body: json<R.AudioCreate>({ style }) }),
  );
}

export async function audioStatus(audioId: string): Promise<AudioStatus> {
  return toAudio(await call<R.AudioOut>(`/audio/${encodeURIComponent(audioId)}`));
}

/** The audio file, fetched with the token so the player works behind auth. */
export async function fetchAudio(url: string): Promise<Blob> {
  const res = await fetch(url, { headers: { ...authHeaders() } });
  if (!res.ok) throw new ApiError(`${res.status} ${res.statusText}`, res.status);
  return await res.blob();
}

// --------------------------------------------------------------------------- accounts

export type AuthMode = R.MeOut["auth"];

export interface Me {
  name: string;
  isAdmin: boolean;
  auth: AuthMode;
  /** Has a password to change (an account made by single sign-on may have none). */
  hasPassword: boolean;
}

const toMe = (raw: R.MeOut): Me => ({ name: raw.name, isAdmin: raw.is_admin, auth: raw.auth, hasPassword: raw.has_password ?? false });

/** The caller (`GET /api/auth/me`), or null when the server does not know them (401). */
export async function getMe(): Promise<Me | null> {
  try {
    return toMe(await call<R.MeOut>("/auth/me", undefined, false));
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return null;
    throw e;
  }
}

/** The server's SLEUTH_AUTH mode, from `/api/health` (open in every mode). */
export async function getAuthMode(): Promise<AuthMode> {
  return (await call<R.HealthOut>("/health")).auth;
}

export interface SingleSignOn {
  /** The provider's name, for "Sign in with …". */
  name: string;
  /** Where the browser goes to sign in with it. */
  loginUrl: string;
}

/** The server's single sign-on provider, from `/api/health`; null when it has none. */
export async function getSingleSignOn(): Promise<SingleSignOn | null> {
  const sso = (await call<R.HealthOut>("/health")).sso;
  return sso ? { name: sso.name, loginUrl: sso.login_url } : null;
}

/** Sign in; the server sets the sign-in and CSRF cookies. A wrong name or password throws (401, 429). */
export async function signIn(username: string, password: string): Promise<Me> {
  const body = json<R.LoginIn>({ username, password });
  return toMe(await call<R.MeOut>("/auth/login", { method: "POST", body }, false));
}

/** End this browser's sign-in on the server (an ended one answers 401: it is over either way). */
export async function signOut(): Promise<void> {
  try {
    await call<unknown>("/auth/logout", { method: "POST" }, false);
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) throw e;
  }
}

export const WRONG_CURRENT_PASSWORD = "the current password is wrong";

/**
 * Change the caller's password; their other sign-ins end, this one stays. A wrong current password
 * throws its 401 to the form; any other 401 means the sign-in itself has ended, which the page handles.
 */
export async function changePassword(currentPassword: string, newPassword: string): Promise<void> {
  const body = json<R.PasswordChangeIn>({ current_password: currentPassword, new_password: newPassword });
  try {
    await call<unknown>("/auth/password", { method: "POST", body }, false);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401 && e.detail !== WRONG_CURRENT_PASSWORD) reportUnauthorized();
    throw e;
  }
}

export interface ApiKey {
  id: string;
  name: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export interface NewApiKey extends ApiKey {
  /** The key itself: in this answer only. */
  key: string;
}

const toKey = (raw: R.ApiKeyOut): ApiKey => ({
  id: raw.id,
  name: raw.name,
  createdAt: raw.created_at,
  expiresAt: raw.expires_at ?? null,
  lastUsedAt: raw.last_used_at ?? null,
});

export async function listKeys(): Promise<ApiKey[]> {
  return (await call<R.ApiKeyOut[]>("/keys")).map(toKey);
}

/** A new key; null `expiresInDays`: it never expires. */
export async function createKey(name: string, expiresInDays: number | null): Promise<NewApiKey> {
  const raw = await call<R.ApiKeyCreated>("/keys", {
    method: "POST",
    body: json<R.ApiKeyCreate>({ name, expires_in_days: expiresInDays }),
  });
  return { ...toKey(raw), key: raw.key };
}

export async function deleteKey(id: string): Promise<void> {
  await call<unknown>(`/keys/${encodeURIComponent(id)}`, { method: "DELETE" });
}

// ------------------------------------------------------------------------------ schedules

export type Notify = R.ScheduleCreate["notify"] & string;

/** What a firing's run found changed, in counts (the items are in its report). */
export interface ChangeSummary {
  changed: boolean;
  since: string;
  counts: ChangeCounts;
}

export interface Firing {
  id: string;
  dueAt: string;
  firedAt: string;
  status: R.FiringOut["status"];
  runId: string | null;
  /** Why it was skipped or failed; `run now` for a run started by hand. */
  detail: string | null;
  delivery: R.FiringOut["delivery"];
  deliveryDetail: string | null;
  runStatus: RunStatus | null;
  reportId: string | null;
  changes: ChangeSummary | null;
}

export type RunStatus = R.RunOut["status"];

export interface Schedule {
  id: string;
  sessionId: string;
  question: string;
  cron: string | null;
  everyS: number | null;
  timezone: string;
  sources: string[] | null;
  mode: string | null;
  notify: Notify;
  webhookUrl: string | null;
  email: string | null;
  paused: boolean;
  nextDueAt: string;
  createdAt: string;
  lastFiring: Firing | null;
}

export interface ScheduleDetail extends Schedule {
  /** Newest first. */
  firings: Firing[];
}

export interface ScheduleInput {
  question: string;
  cron?: string;
  every?: string;
  timezone: string;
  sources?: string[] | null;
  /** Unset: the server's default. */
  mode?: Mode;
  notify: Notify;
  webhookUrl?: string;
}

const COUNT_NAMES = [
  "sources_new",
  "sources_gone",
  "sources_changed",
  "sources_unchanged",
  "claims_new",
  "claims_dropped",
  "claims_changed",
  "claims_unchanged",
] as const;

function toCounts(raw: R.ChangeCounts): ChangeCounts {
  return Object.fromEntries(COUNT_NAMES.map((k) => [k, raw[k] ?? 0])) as unknown as ChangeCounts;
}

function toFiring(raw: R.FiringOut): Firing {
  return {
    id: raw.id,
    dueAt: raw.due_at,
    firedAt: raw.fired_at,
    status: raw.status,
    runId: raw.run_id,
    detail: raw.detail,
    delivery: raw.delivery,
    deliveryDetail: raw.delivery_detail,
    runStatus: raw.run_status ?? null,
    reportId: raw.report_id ?? null,
    changes: raw.changes ? { changed: raw.changes.changed, since: raw.changes.since, counts: toCounts(raw.changes.counts) } : null,
  };
}

function toSchedule(raw: R.ScheduleOut): Schedule {
  return {
    id: raw.id,
    sessionId: raw.session_id,
    question: raw.question,
    cron: raw.cron,
    everyS: raw.every_s,
    timezone: raw.timezone,
    sources: raw.sources,
    mode: raw.mode,
    notify: raw.notify,
    webhookUrl: raw.webhook_url,
    email: raw.email,
    paused: raw.paused,
    nextDueAt: raw.next_due_at,
    createdAt: raw.created_at,
    lastFiring: raw.last_firing ? toFiring(raw.last_firing) : null,
  };
}

export async function listSchedules(): Promise<Schedule[]> {
  return (await call<R.ScheduleOut[]>("/schedules")).map(toSchedule);
}

export async function getSchedule(id: string): Promise<ScheduleDetail> {
  const raw = await call<R.ScheduleDetail>(`/schedules/${encodeURIComponent(id)}`);
  const firings = raw.firings.map(toFiring);
  // The detail lists the firings instead of naming the last one.
  return { ...toSchedule(raw), lastFiring: firings[0] ?? null, firings };
}

export interface CreatedSchedule extends Schedule {
  /** The webhook's signing secret: in this response only, never shown again. */
  webhookSecret: string | null;
}

/** A 422 names the refused field in its `detail` (see `fieldErrors`). */
export async function createSchedule(input: ScheduleInput): Promise<CreatedSchedule> {
  const body = json<R.ScheduleCreate>({
    question: input.question,
    cron: input.cron || undefined,
    every: input.every || undefined,
    timezone: input.timezone,
    sources: input.sources?.length ? input.sources : undefined,
    mode: input.mode,
    notify: input.notify,
    webhook_url: input.webhookUrl || undefined,
  });
  const raw = await call<R.ScheduleCreated>("/schedules", { method: "POST", body });
  return { ...toSchedule(raw), webhookSecret: raw.webhook_secret };
}

export async function setSchedulePaused(id: string, paused: boolean): Promise<Schedule> {
  return toSchedule(
    await call<R.ScheduleOut>(`/schedules/${encodeURIComponent(id)}`, { method: "PATCH", body: json<R.ScheduleUpdate>({ paused }) }),
  );
}

/** Stops the schedule; its session keeps the runs and reports it made. */
export async function deleteSchedule(id: string): Promise<void> {
  await call<unknown>(`/schedules/${encodeURIComponent(id)}`, { method: "DELETE" });
}

/** Run the schedule's question now (409 while its previous run still runs). */
export async function runScheduleNow(id: string): Promise<{ runId: string; sessionId: string }> {
  const raw = await call<R.ScheduleRunStarted>(`/schedules/${encodeURIComponent(id)}/run`, { method: "POST" });
  return { runId: raw.run_id, sessionId: raw.session_id };
}
