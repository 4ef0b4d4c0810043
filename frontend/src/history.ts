// The history's entries as the sidebar shows them: every title distinct in what fits on its two
// lines. Pure, so the rules are unit-tested apart from the list.
import type { SessionSummary } from "./api";

export interface HistoryEntry {
  session: SessionSummary;
  /** The title as shown: a long title that begins like another is shortened to where they differ. */
  title: string;
  /** 2, 3… for the second and later sessions of one title, oldest first; null for the first or an only one. */
  repeat: number | null;
}

export const UNTITLED = "Untitled research";
/** About what two lines of the sidebar hold. */
export const VISIBLE_CHARS = 44;
// Kept of a shortened title: its first words, and a few words before where it differs from another.
const HEAD_CHARS = 20;
const CONTEXT_CHARS = 14;

const comparable = (title: string) =>
  title
    .replace(/(?:…|\.\.\.)$/u, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();

/** How many leading characters `a` and `b` share (both already comparable). */
function shared(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/** The start of the word that holds offset `at` (or `at` itself at a space). */
function wordStart(text: string, at: number): number {
  let i = Math.max(0, Math.min(at, text.length));
  while (i > 0 && text[i - 1] !== " ") i--;
  return i;
}

/** `title`'s first words (at most HEAD_CHARS), then an ellipsis, then its words from `from` on. */
function elide(title: string, from: number): string {
  const headEnd = wordStart(title, HEAD_CHARS + 1);
  const head = title.slice(0, headEnd > 0 ? headEnd : HEAD_CHARS).trimEnd();
  const start = Math.max(wordStart(title, from), headEnd);
  return `${head} … ${title.slice(start).trimStart()}`;
}

/**
 * The entries of `sessions` (in their order) with titles a reader can tell apart: equal titles are
 * numbered by age, and titles that share more than what two lines show are cut to their first words
 * and the words where they part.
 */
export function historyEntries(sessions: SessionSummary[]): HistoryEntry[] {
  const titles = sessions.map((s) => s.title.replace(/\s+/g, " ").trim() || UNTITLED);
  const keys = titles.map(comparable);

  const repeats = new Map<number, number>();
  const byKey = new Map<string, number[]>();
  keys.forEach((key, i) => byKey.set(key, [...(byKey.get(key) ?? []), i]));
  for (const group of byKey.values()) {
    if (group.length < 2) continue;
    const age = (i: number) => sessions[i].createdAt ?? "";
    // Oldest first; the list's own order (newest first) breaks ties.
    const oldestFirst = [...group].sort((a, b) => age(a).localeCompare(age(b)) || b - a);
    oldestFirst.forEach((i, n) => n > 0 && repeats.set(i, n + 1));
  }

  return sessions.map((session, i) => {
    let common = 0;
    keys.forEach((other, j) => {
      if (j !== i && other !== keys[i]) common = Math.max(common, shared(keys[i], other));
    });
    // A title that fits is shown whole; a longer one, when it parts from another past what shows, is cut.
    const hidden = titles[i].length > VISIBLE_CHARS && common > VISIBLE_CHARS - CONTEXT_CHARS;
    const title = hidden ? elide(titles[i], common - CONTEXT_CHARS) : titles[i];
    return { session, title, repeat: repeats.get(i) ?? null };
  });
}

/** How an entry is named to a screen reader and in its buttons' labels: its title and its number. */
export function entryLabel(entry: HistoryEntry): string {
  return entry.repeat ? `${entry.title} (#${entry.repeat})` : entry.title;
}
