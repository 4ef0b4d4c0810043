// Which parts of an opened document to highlight: the passages a report cited it for.
// Pure functions, so the matching is unit-tested apart from the viewer.

export interface Segment {
  text: string;
  mark: boolean;
}

const MIN_NEEDLE = 16;
// Markdown and snippet marks: left out of a passage, and so out of the text it is looked for in.
const MARKS = /[«»`*_]/;

function clean(s: string): string {
  return s
    .replace(new RegExp(MARKS.source, "g"), "")
    .replace(/\s+/g, " ")
    .trim();
}

/** Sentences of `markdown` that cite `[n]`, without their markers and markdown emphasis. */
export function citingSentences(markdown: string, n: number): string[] {
  const out: string[] = [];
  const marker = new RegExp(`\\[${n}\\]`);
  for (const line of markdown.split("\n")) {
    if (!marker.test(line)) continue;
    const body = line.replace(/^\s*(?:[-*+]|\d+\.|#+)\s+/, "");
    // A sentence ends at . ! ? or at its citation markers.
    for (const m of body.matchAll(/([^.!?[\]]+(?:[.!?](?=\s|$|\[))?)\s*((?:\[\d+\])+)/g)) {
      if (marker.test(m[2])) out.push(clean(m[1]));
    }
  }
  return out.filter((s) => s.length >= MIN_NEEDLE);
}

/** The pieces of a search snippet: text between ellipses, without the «match» marks or "Heading: " prefix. */
export function snippetPieces(snippet: string): string[] {
  return snippet
    .split("…")
    .map(clean)
    .filter((s) => s.length >= MIN_NEEDLE);
}

/** `text` cut into marked and unmarked segments; each needle is found ignoring case and runs of spaces. */
export function highlight(text: string, needles: string[]): Segment[] {
  // A normalised copy (lower case, one space per run) with a map back to offsets in `text`.
  const map: number[] = [];
  let norm = "";
  let space = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (MARKS.test(ch)) continue; // `__getattr__` in the text is "getattr" in a cleaned passage
    if (/\s/.test(ch)) {
      if (!space && norm) {
        norm += " ";
        map.push(i);
      }
      space = true;
    } else {
      norm += ch.toLowerCase();
      map.push(i);
      space = false;
    }
  }
  const ranges: [number, number][] = [];
  for (const needle of needles) {
    const want = clean(needle).toLowerCase();
    if (want.length < MIN_NEEDLE) continue;
    let at = norm.indexOf(want);
    // A snippet's first piece may start mid-sentence with its heading prefix: try without it.
    if (at < 0 && want.includes(": ")) at = norm.indexOf(want.slice(want.indexOf(": ") + 2));
    if (at < 0) continue;
    const end = Math.min(norm.length, at + want.length) - 1;
    ranges.push([map[at], map[end] + 1]);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  const out: Segment[] = [];
  let pos = 0;
  for (const [a, b] of merged) {
    if (a > pos) out.push({ text: text.slice(pos, a), mark: false });
    out.push({ text: text.slice(a, b), mark: true });
    pos = b;
  }
  if (pos < text.length) out.push({ text: text.slice(pos), mark: false });
  return out;
}
