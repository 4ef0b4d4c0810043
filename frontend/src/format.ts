// Small display formatters shared by components.

export function formatElapsed(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "0:00";
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

export function formatInt(n: number): string {
  return Math.round(n || 0).toLocaleString("en-US");
}

export function formatCost(usd: number): string {
  if (!usd) return "$0";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** The offline model is extractive, and the contract says to say so wherever it shows. */
export function modelLabel(model: string): string {
  return model === "offline" || model.startsWith("offline/") ? `${model} (extractive)` : model;
}

/** Plan steps sometimes keep their "1." prefix; the list numbers them already. */
export function stripNumbering(step: string): string {
  return step.replace(/^\s*(?:\d+[.)]|[-*•])\s+/, "").trim();
}

export function parseTime(iso: string | null | undefined): number | null {
  if (!iso) return null;
  // Server timestamps without a zone are UTC.
  const t = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : iso + "Z");
  return Number.isNaN(t) ? null : t;
}

/** What to show for a caught error: its message, or the thrown value as text. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A server timestamp as a short local date and time ("" when it is not one); the year when asked. */
export function formatDate(iso: string, withYear = false): string {
  const t = parseTime(iso);
  if (t === null) return "";
  const year = withYear ? ({ year: "numeric" } as const) : {};
  return new Date(t).toLocaleString(undefined, { ...year, month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}
