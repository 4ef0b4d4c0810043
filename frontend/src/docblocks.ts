// An opened document's blocks (headings, paragraphs, items, code, tables: rest.gen.ts, read by
// the backend from the stored text) with the cited passages marked. Pure, so the viewer only renders.
import type { DocumentOut } from "./rest.gen";
import { highlight, type Segment } from "./passages";

export type TextBlock = DocumentOut["blocks"][number];

/** A block whose texts are cut into marked and unmarked segments. */
export type MarkedBlock =
  | { kind: "heading"; level: number; text: Segment[] }
  | { kind: "paragraph" | "term" | "code"; depth: number; text: Segment[] }
  | { kind: "item"; depth: number; marker: string; text: Segment[] }
  | { kind: "table"; depth: number; header: boolean; rows: Segment[][][] };

export interface MarkedDocument {
  blocks: MarkedBlock[];
  /** How many passages were found and marked. */
  marks: number;
}

/** A block's texts in reading order: a table's cells row by row, any other block's one text. */
function texts(block: TextBlock): string[] {
  return block.kind === "table" ? block.rows.flat() : [block.text];
}

const same = (a: string, b: string) => a.replace(/\s+/g, " ").trim().toLowerCase() === b.replace(/\s+/g, " ").trim().toLowerCase();

/** Segments of `text` that lie between `from` and `to` (offsets into the text the segments cover). */
function slice(segments: Segment[], starts: number[], from: number, to: number): Segment[] {
  const out: Segment[] = [];
  segments.forEach((segment, i) => {
    const a = Math.max(from, starts[i]);
    const b = Math.min(to, starts[i] + segment.text.length);
    if (a < b) out.push({ text: segment.text.slice(a - starts[i], b - starts[i]), mark: segment.mark });
  });
  return out;
}

/**
 * The blocks to show, with `needles` (the passages the document was cited for) marked across them:
 * a passage may run from one block into the next. A first heading that repeats `title` is left out,
 * as the viewer shows the title above the text.
 */
export function markBlocks(blocks: TextBlock[], needles: string[], title = ""): MarkedDocument {
  const shown = blocks.length && blocks[0].kind === "heading" && same(blocks[0].text, title) ? blocks.slice(1) : blocks;
  const pieces = shown.flatMap(texts);
  // One text for the search, the pieces apart by a line break (a space to the matching).
  const joined = pieces.join("\n");
  const segments = highlight(joined, needles);
  const starts: number[] = [];
  segments.reduce((at, segment) => (starts.push(at), at + segment.text.length), 0);
  let at = 0;
  let index = 0;
  const next = (): Segment[] => {
    const piece = pieces[index++] ?? "";
    const out = slice(segments, starts, at, at + piece.length);
    at += piece.length + 1;
    return out;
  };
  const marked = shown.map((block): MarkedBlock => {
    switch (block.kind) {
      case "heading":
        return { kind: "heading", level: block.level, text: next() };
      case "item":
        return { kind: "item", depth: block.depth, marker: block.marker, text: next() };
      case "table":
        return { kind: "table", depth: block.depth, header: block.header, rows: block.rows.map((row) => row.map(() => next())) };
      default:
        return { kind: block.kind, depth: block.depth, text: next() };
    }
  });
  return { blocks: marked, marks: segments.filter((s) => s.mark).length };
}
