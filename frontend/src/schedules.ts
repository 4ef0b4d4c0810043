// Schedules in words: a cron expression or an interval, a due time in two zones, a firing's
// result, and the server's refusals placed next to the form's fields. Pure functions, no I/O.

import type { ChangeCounts, ChangeSet } from "./types";

export interface Timing {
  cron: string | null;
  everyS: number | null;
  timezone: string;
}

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** `5400` → "1 hour 30 minutes"; whole days, hours, minutes (the server's shortest interval is a minute). */
export function describeInterval(seconds: number): string {
  const parts: string[] = [];
  let left = Math.max(0, Math.round(seconds));
  for (const [size, word] of [
    [86400, "day"],
    [3600, "hour"],
    [60, "minute"],
  ] as const) {
    const n = Math.floor(left / size);
    left -= n * size;
    if (n) parts.push(plural(n, word));
  }
  if (left || !parts.length) parts.push(plural(left, "second"));
  return parts.join(" ");
}

const NUMBER = /^\d+$/;
const pad = (n: string) => n.padStart(2, "0");

function dayName(text: string): string | null {
  if (!NUMBER.test(text)) return null;
  const n = Number(text) % 7; // cron's 7 is Sunday too
  return DAYS[n] ?? null;
}

/** The day-of-week field in words ("weekdays", "Monday and Friday"), null when it is not a simple list. */
function describeWeekdays(field: string): string | null {
  if (field === "1-5") return "weekdays";
  if (field === "0,6" || field === "6,0" || field === "6-7") return "weekends";
  const names: string[] = [];
  for (const part of field.split(",")) {
    const range = /^(\d)-(\d)$/.exec(part);
    if (range) {
      const [a, b] = [dayName(range[1]), dayName(range[2])];
      if (!a || !b) return null;
      names.push(`${a} to ${b}`);
      continue;
    }
    const name = dayName(part);
    if (!name) return null;
    names.push(name);
  }
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}` : (names[0] ?? null);
}

/**
 * A five-field cron expression in words for the common shapes (every N minutes, hourly, daily,
 * on weekdays, monthly); anything else is quoted as it is.
 */
export function describeCron(expression: string): string {
  const fields = expression.trim().split(/\s+/);
  const quoted = `On the cron schedule “${expression.trim()}”`;
  if (fields.length !== 5) return quoted;
  const [minute, hour, dom, month, dow] = fields;
  const step = /^\*\/(\d+)$/.exec(minute);
  if (step && hour === "*" && dom === "*" && month === "*" && dow === "*") return `Every ${plural(Number(step[1]), "minute")}`;
  if (minute === "*" && hour === "*" && dom === "*" && month === "*" && dow === "*") return "Every minute";
  if (NUMBER.test(minute) && hour === "*" && dom === "*" && month === "*" && dow === "*") {
    return Number(minute) === 0 ? "Every hour, on the hour" : `Every hour at ${pad(minute)} minutes past`;
  }
  if (!NUMBER.test(minute)) return quoted;
  const hours = hour.split(",");
  if (!hours.every((h) => NUMBER.test(h))) return quoted;
  const at = `at ${hours.map((h) => `${pad(h)}:${pad(minute)}`).join(" and ")}`;
  if (month !== "*") {
    const m = NUMBER.test(month) ? MONTHS[Number(month) - 1] : null;
    if (!m || !NUMBER.test(dom) || dow !== "*") return quoted;
    return `Every year on ${m} ${Number(dom)} ${at}`;
  }
  if (dom === "*" && dow === "*") return `Every day ${at}`;
  if (dom === "*") {
    const days = describeWeekdays(dow);
    return days ? `On ${days} ${at}` : quoted;
  }
  if (NUMBER.test(dom) && dow === "*") return `On day ${Number(dom)} of every month ${at}`;
  return quoted;
}

/** When a schedule fires, in words, with the zone its cron is read in. */
export function describeTiming(t: Timing): string {
  if (t.everyS !== null) return `Every ${describeInterval(t.everyS)}`;
  if (t.cron) return `${describeCron(t.cron)} (${t.timezone} time)`;
  return "No timing";
}

/** The browser's IANA zone, the form's default. */
export function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

function formatIn(instant: Date, zone: string): string {
  try {
    return instant.toLocaleString("en-GB", {
      timeZone: zone,
      weekday: "short",
      day: "numeric",
      month: "short",
      hour: "2-digit",
      minute: "2-digit",
    });
  } catch {
    return instant.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  }
}

/** A UTC instant in the reader's zone, as due times and firings are shown ("Mon 2 Mar, 07:00"). */
export function formatLocal(iso: string, localZone: string = browserZone()): string {
  const instant = new Date(iso);
  return Number.isNaN(instant.getTime()) ? iso : formatIn(instant, localZone);
}

export interface DueTime {
  /** In the reader's zone. */
  local: string;
  /** In the schedule's zone; null when it is the reader's. */
  there: string | null;
}

/** A UTC due time as the reader reads it and as the schedule's zone does (when that is another). */
export function formatDue(iso: string, zone: string, localZone: string = browserZone()): DueTime | null {
  const instant = new Date(iso);
  if (Number.isNaN(instant.getTime())) return null;
  const local = formatIn(instant, localZone);
  if (zone === localZone) return { local, there: null };
  return { local, there: `${formatIn(instant, zone)} ${zone}` };
}

/** The firing fields the result reads (the API's firing, camelCased). */
export interface FiringLike {
  status: "fired" | "skipped" | "failed";
  detail: string | null;
  runStatus: string | null;
  changes: { changed: boolean; counts: ChangeCounts } | null;
}

export type ResultKind = "changed" | "unchanged" | "first" | "running" | "skipped" | "failed" | "none";

export interface FiringResult {
  kind: ResultKind;
  label: string;
  /** Why it was skipped or failed. */
  reason: string | null;
}

/** What a firing came to: something changed, nothing changed, the first run, still running, skipped or failed. */
export function firingResult(firing: FiringLike | null): FiringResult {
  if (!firing) return { kind: "none", label: "Not run yet", reason: null };
  if (firing.status === "skipped") return { kind: "skipped", label: "Skipped", reason: firing.detail };
  if (firing.status === "failed") return { kind: "failed", label: "Failed", reason: firing.detail };
  if (firing.runStatus === "running") return { kind: "running", label: "Running", reason: null };
  if (firing.runStatus === "error" || firing.runStatus === "cancelled") {
    return { kind: "failed", label: firing.runStatus === "error" ? "Failed" : "Stopped", reason: null };
  }
  if (!firing.changes) return { kind: "first", label: "First run", reason: null };
  return firing.changes.changed ? { kind: "changed", label: "Changed", reason: null } : { kind: "unchanged", label: "Nothing changed", reason: null };
}

/** The counts of a diff in one line: "Claims: 1 changed, 1 new · Sources: 1 changed · unchanged: 3 claims, 1 source". */
export function countsText(c: ChangeCounts): string {
  const some = (pairs: [number, string][]) =>
    pairs
      .filter(([n]) => n > 0)
      .map(([n, w]) => `${n} ${w}`)
      .join(", ");
  const claims = some([
    [c.claims_changed, "changed"],
    [c.claims_new, "new"],
    [c.claims_dropped, "dropped"],
  ]);
  const sources = some([
    [c.sources_changed, "changed"],
    [c.sources_new, "new"],
    [c.sources_gone, "gone"],
  ]);
  const parts = [claims ? `Claims: ${claims}` : "", sources ? `Sources: ${sources}` : ""].filter(Boolean);
  if (!parts.length) parts.push("Nothing changed");
  parts.push(`unchanged: ${plural(c.claims_unchanged, "claim")}, ${plural(c.sources_unchanged, "source")}`);
  return parts.join(" · ");
}

// ------------------------------------------------------------------------------ the diff

export type ClaimItem = ChangeSet["claims"][number];
export type SourceItem = ChangeSet["sources"][number];

export interface ChangeGroups {
  claims: { changed: ClaimItem[]; new: ClaimItem[]; dropped: ClaimItem[] };
  sources: { changed: SourceItem[]; new: SourceItem[]; gone: SourceItem[] };
}

/** The diff's items grouped by what happened to them, each group in the server's order. */
export function groupChanges(changes: Pick<ChangeSet, "claims" | "sources">): ChangeGroups {
  const claims: ChangeGroups["claims"] = { changed: [], new: [], dropped: [] };
  const sources: ChangeGroups["sources"] = { changed: [], new: [], gone: [] };
  for (const c of changes.claims ?? []) claims[c.status]?.push(c);
  for (const s of changes.sources ?? []) sources[s.status]?.push(s);
  return { claims, sources };
}

const SECTION = /^## What changed since [^\n]*\n/;

/**
 * The report's markdown without the "What changed since …" section the server opens it with (the
 * structured diff is shown in its place). The section is its heading, one line, and, when
 * something changed, one block of list lines; the report goes on after a blank line.
 */
export function withoutChangesSection(markdown: string, changed: boolean): string {
  let head = "";
  let body = markdown;
  if (body.startsWith("# ")) {
    const end = body.indexOf("\n");
    if (end < 0) return markdown;
    head = body.slice(0, end + 1);
    body = body.slice(end + 1).replace(/^\n+/, "");
  }
  if (!SECTION.test(body)) return markdown;
  const blocks = body.split("\n\n");
  // heading, then the tally (or "Nothing changed"), then the list of items when something changed
  let take = 2;
  if (changed && blocks[2]?.split("\n").every((line) => line.startsWith("- "))) take = 3;
  const rest = blocks.slice(take).join("\n\n");
  return head ? `${head}\n${rest}` : rest;
}

// ------------------------------------------------------------------------------ the form

export type FormField = "question" | "cron" | "every" | "timezone" | "sources" | "mode" | "notify" | "webhook_url" | "email";
const FIELDS: FormField[] = ["question", "cron", "every", "timezone", "sources", "mode", "notify", "webhook_url", "email"];

export type FieldErrors = Partial<Record<FormField | "form", string>>;

/**
 * A 422's `detail` placed by field: the server's own refusals read "field: problem", request
 * validation gives a list with each error's location. What names no field goes to the form.
 */
export function fieldErrors(detail: unknown, fallback: string): FieldErrors {
  const out: FieldErrors = {};
  const put = (field: string | undefined, message: string) => {
    const key = FIELDS.includes(field as FormField) ? (field as FormField) : "form";
    out[key] = out[key] ? `${out[key]}; ${message}` : message;
  };
  if (typeof detail === "string") {
    const m = /^([a-z_]+): (.*)$/s.exec(detail);
    if (m && FIELDS.includes(m[1] as FormField)) put(m[1], m[2]);
    else put(undefined, detail);
  } else if (Array.isArray(detail)) {
    for (const item of detail) {
      const loc = Array.isArray(item?.loc) ? item.loc : [];
      const field = loc[0] === "body" ? loc[1] : undefined;
      put(typeof field === "string" ? field : undefined, typeof item?.msg === "string" ? item.msg : "invalid");
    }
  }
  if (!Object.keys(out).length) out.form = fallback;
  return out;
}

// ------------------------------------------------------------------------------ words that changed

export interface Segment {
  text: string;
  kind: "same" | "removed" | "added";
}

/** A sentence without the citation markers it carries ("[3]", "[1, 2]"): the diff shows its own. */
export function withoutMarkers(text: string): string {
  return text
    .replace(/\s*\[\d+(?:\s*,\s*\d+)*\]/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * The words of `before` and `after` as two runs of segments (a longest common subsequence of
 * words): what both share is `same`, the rest `removed` from the first and `added` in the second.
 */
export function wordDiff(before: string, after: string): { before: Segment[]; after: Segment[] } {
  const a = before.split(/(\s+)/).filter(Boolean);
  const b = after.split(/(\s+)/).filter(Boolean);
  // Long texts are compared whole: the table grows with the product of their lengths.
  if (a.length * b.length > 250_000) {
    return { before: [{ text: before, kind: "removed" }], after: [{ text: after, kind: "added" }] };
  }
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const left: Segment[] = [];
  const right: Segment[] = [];
  const push = (list: Segment[], text: string, kind: Segment["kind"]) => {
    const last = list[list.length - 1];
    if (last && last.kind === kind) last.text += text;
    else list.push({ text, kind });
  };
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      push(left, a[i], "same");
      push(right, b[j], "same");
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) push(left, a[i++], "removed");
    else push(right, b[j++], "added");
  }
  while (i < n) push(left, a[i++], "removed");
  while (j < m) push(right, b[j++], "added");
  return { before: left, after: right };
}

export interface PassagePairs {
  /** A passage that went and the one that took its place (they share most of their words). */
  pairs: { removed: string; added: string }[];
  added: string[];
  removed: string[];
}

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/** Share of the smaller passage's words the other has too. */
function overlap(a: Set<string>, b: Set<string>): number {
  if (!a.size || !b.size) return 0;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return shared / Math.min(a.size, b.size);
}

/**
 * A changed source's passages, each removed one paired with the added one most like it (most alike
 * first, each passage in one pair at most), so an edit reads as before and after; the rest stay
 * added or removed.
 */
export function pairPassages(removed: string[], added: string[], threshold = 0.6): PassagePairs {
  const r = removed.map(words);
  const a = added.map(words);
  const candidates: [number, number, number][] = [];
  r.forEach((rw, i) =>
    a.forEach((aw, j) => {
      const score = overlap(rw, aw);
      if (score >= threshold) candidates.push([score, i, j]);
    }),
  );
  candidates.sort((x, y) => y[0] - x[0] || x[1] - y[1] || x[2] - y[2]);
  const usedR = new Set<number>();
  const usedA = new Set<number>();
  const pairs: { i: number; j: number }[] = [];
  for (const [, i, j] of candidates) {
    if (usedR.has(i) || usedA.has(j)) continue;
    usedR.add(i);
    usedA.add(j);
    pairs.push({ i, j });
  }
  pairs.sort((x, y) => x.j - y.j);
  return {
    pairs: pairs.map(({ i, j }) => ({ removed: removed[i], added: added[j] })),
    added: added.filter((_, j) => !usedA.has(j)),
    removed: removed.filter((_, i) => !usedR.has(i)),
  };
}
