// Every HTTP call the UI makes, in one place: the server's snake_case bodies (docs/protocol.md
// and /docs) become the UI's camelCase types here and nowhere else.

import { authHeaders, reportUnauthorized } from "./auth";
import type { DocumentOut } from "./document.gen";

export type Mode = "light" | "heavy";

export interface SessionSummary {
  id: string;
  title: string;
  createdAt: string | null;
  updatedAt: string | null;
}

export interface SessionMessage {
  role: "user" | "assistant" | string;
  content: string;
  runId: string | null;
}

export interface SessionRun {
  id: string;
  status: string;
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
  ) {
    super(message);
  }
}

const BASE = "/api";

/** Throw an ApiError carrying the server's `detail` for a response that failed (and report a 401). */
async function refuseFailure(res: Response): Promise<void> {
  if (res.status === 401) reportUnauthorized();
  if (res.ok) return;
  let detail = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (body && typeof body.detail === "string") detail = body.detail;
  } catch {
    /* not JSON */
  }
  throw new ApiError(detail, res.status);
}

async function call<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(BASE + path, {
    ...init,
    headers: {
      Accept: "application/json",
      ...(init?.body ? { "Content-Type": "application/json" } : {}),
      ...authHeaders(),
      ...init?.headers,
    },
  });
  await refuseFailure(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

type Json = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === "string" ? v : typeof v === "number" ? String(v) : null);

function toSummary(raw: Json): SessionSummary {
  return {
    id: str(raw.id) ?? "",
    title: str(raw.title) ?? "",
    createdAt: str(raw.created_at),
    updatedAt: str(raw.updated_at),
  };
}

export async function listSessions(): Promise<SessionSummary[]> {
  return (await call<Json[]>("/sessions")).map(toSummary);
}

/** The server names the session (from its first message); an empty body is sent. */
export async function createSession(): Promise<SessionSummary> {
  return toSummary(await call<Json>("/sessions", { method: "POST", body: "{}" }));
}

export async function getSession(id: string): Promise<SessionDetail> {
  const raw = await call<Json>(`/sessions/${encodeURIComponent(id)}`);
  const messages = (raw.messages as Json[]).map((m) => ({
    role: str(m.role) ?? "user",
    content: str(m.content) ?? "",
    runId: str(m.run_id),
  }));
  const runs = (raw.runs as Json[]).map((r) => ({
    id: str(r.id) ?? "",
    status: str(r.status) ?? "",
    createdAt: str(r.created_at),
  }));
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
  const body = await call<Json>(`/sessions/${encodeURIComponent(sessionId)}/messages`, {
    method: "POST",
    body: JSON.stringify({
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
  const runId = str(body.run_id);
  if (!runId) throw new ApiError("server returned no run_id", 500);
  return { runId };
}

export async function cancelRun(runId: string): Promise<void> {
  await call<unknown>(`/runs/${encodeURIComponent(runId)}/cancel`, { method: "POST" });
}

export interface SourceInfo {
  name: string;
  kind: "local" | "web" | string;
  documents: number | null;
  default: boolean;
}

export async function listSources(): Promise<SourceInfo[]> {
  const body = await call<unknown>("/sources");
  return ((Array.isArray(body) ? body : []) as Json[])
    .map((s) => ({
      name: str(s.name) ?? "",
      kind: str(s.kind) ?? "local",
      documents: typeof s.documents === "number" ? s.documents : null,
      default: s.default === true,
    }))
    .filter((s) => s.name);
}

export interface CollectionInfo {
  name: string;
  kind: string;
  documents: number;
}

export async function listCollections(): Promise<CollectionInfo[]> {
  const body = await call<unknown>("/collections");
  return ((Array.isArray(body) ? body : []) as Json[]).map((c) => ({
    name: str(c.name) ?? "",
    kind: str(c.kind) ?? "",
    documents: typeof c.documents === "number" ? c.documents : 0,
  }));
}

export type OpenedDocument = DocumentOut;

/** A document's text and its blocks to read (`GET /api/documents?url=`). */
export async function getDocument(url: string): Promise<OpenedDocument> {
  const raw = await call<Json>(`/documents?url=${encodeURIComponent(url)}`);
  return {
    id: str(raw.id) ?? "",
    url: str(raw.url) ?? url,
    title: str(raw.title) ?? "",
    collection: str(raw.collection),
    text: str(raw.text) ?? "",
    blocks: Array.isArray(raw.blocks) ? (raw.blocks as DocumentOut["blocks"]) : [],
  };
}

/**
 * Upload one file into a collection (created if new). XMLHttpRequest rather than fetch: it is
 * the one browser API that reports upload progress.
 */
export function uploadFile(collection: string, file: File, onProgress: (fraction: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${BASE}/collections/${encodeURIComponent(collection)}/documents`);
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
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
  await call<unknown>(`/runs/${encodeURIComponent(runId)}/plan`, { method: "POST", body: JSON.stringify(answer) });
}

export async function renameSession(id: string, title: string): Promise<SessionSummary> {
  return toSummary(await call<Json>(`/sessions/${encodeURIComponent(id)}`, { method: "PATCH", body: JSON.stringify({ title }) }));
}

/** Deletes the session with its runs, reports and audio. */
export async function deleteSession(id: string): Promise<void> {
  await call<unknown>(`/sessions/${encodeURIComponent(id)}`, { method: "DELETE" });
}

export async function searchSessions(query: string): Promise<SessionSummary[]> {
  const body = await call<unknown>(`/sessions?q=${encodeURIComponent(query)}`);
  return (Array.isArray(body) ? (body as Json[]) : []).map(toSummary).filter((s) => s.id);
}

export type ExportFormat = "md" | "pdf" | "docx";

/** The stored report rendered by the server as a file (fetched with the token, so it works behind auth). */
export async function fetchReportFile(reportId: string, format: ExportFormat): Promise<Blob> {
  const res = await fetch(`${BASE}/reports/${encodeURIComponent(reportId)}.${format}`, { headers: { ...authHeaders() } });
  await refuseFailure(res);
  return await res.blob();
}

export type AudioStyle = "narration" | "overview" | "dialogue";

export interface AudioStatus {
  audioId: string;
  status: "pending" | "done" | "failed";
  url: string | null;
  error: string | null;
  durationS: number | null;
  /** While pending: writing the script, or speaking line `done` of `total`. */
  progress: { stage: "script" | "speech"; done: number; total: number } | null;
}

function toAudio(raw: Json): AudioStatus {
  const status = str(raw.status);
  const progress = raw.progress && typeof raw.progress === "object" ? (raw.progress as Json) : null;
  return {
    audioId: str(raw.audio_id) ?? "",
    status: status === "done" || status === "failed" ? status : "pending",
    url: str(raw.url),
    error: str(raw.error),
    durationS: typeof raw.duration_s === "number" ? raw.duration_s : null,
    progress: progress
      ? {
          stage: progress.stage === "speech" ? "speech" : "script",
          done: typeof progress.done === "number" ? progress.done : 0,
          total: typeof progress.total === "number" ? progress.total : 0,
        }
      : null,
  };
}

export async function startAudio(reportId: string, style: AudioStyle): Promise<AudioStatus> {
  return toAudio(await call<Json>(`/reports/${encodeURIComponent(reportId)}/audio`, { method: "POST", body: JSON.stringify({ style }) }));
}

export async function audioStatus(audioId: string): Promise<AudioStatus> {
  return toAudio(await call<Json>(`/audio/${encodeURIComponent(audioId)}`));
}

/** The audio file, fetched with the token so the player works behind auth. */
export async function fetchAudio(url: string): Promise<Blob> {
  const res = await fetch(url, { headers: { ...authHeaders() } });
  if (!res.ok) throw new ApiError(`${res.status} ${res.statusText}`, res.status);
  return await res.blob();
}
