// Where packets land in the timeline: placement, turns, the blocks inside a turn, and the
// run-wide document registry. Pure functions over RunState, shared by the packet handlers.

import type { Document, Placement } from "../types";
import type { Block, MessageBlock, RunState, Turn } from "./state";

export function normalisePlacement(p: Partial<Placement> | undefined): Placement {
  return {
    turn_index: typeof p?.turn_index === "number" ? p.turn_index : 0,
    tab_index: typeof p?.tab_index === "number" ? p.tab_index : 0,
    sub_turn_index: typeof p?.sub_turn_index === "number" ? p.sub_turn_index : null,
  };
}

/** A copy of `items` with the element at `i` replaced by `fn(element)`. */
export function replaceAt<T, U extends T = T>(items: readonly T[], i: number, fn: (item: U) => U): T[] {
  const out = items.slice();
  out[i] = fn(items[i] as U);
  return out;
}

/** Return the state with turn `index` replaced by `fn(turn)`; turns stay sorted by index. */
export function withTurn(s: RunState, index: number, fn: (t: Turn) => Turn): RunState {
  const at = s.turns.findIndex((t) => t.index === index);
  if (at >= 0) return { ...s, turns: replaceAt(s.turns, at, fn) };
  const turns = [...s.turns, fn({ index, blocks: [] })].sort((a, b) => a.index - b.index);
  return { ...s, turns };
}

export function pushBlock(s: RunState, place: Placement, block: Block): RunState {
  return withTurn(s, place.turn_index, (t) => ({ ...t, blocks: [...t.blocks, block] }));
}

export type BlockOf<K extends Block["kind"]> = Extract<Block, { kind: K }>;

export function lastIndexOf<K extends Block["kind"]>(blocks: Block[], kind: K, openOnly: boolean): number {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i];
    if (b.kind === kind && (!openOnly || !("done" in b) || !b.done)) return i;
  }
  return -1;
}

/** Update the latest still-open block of `kind` in this turn, or append `create()`. */
export function updateOpenBlock<K extends Block["kind"]>(
  s: RunState,
  place: Placement,
  kind: K,
  fn: (b: BlockOf<K>) => BlockOf<K>,
  create: () => BlockOf<K>,
): RunState {
  return withTurn(s, place.turn_index, (t) => {
    const i = lastIndexOf(t.blocks, kind, true);
    if (i < 0) return { ...t, blocks: [...t.blocks, create()] };
    return { ...t, blocks: replaceAt<Block, BlockOf<K>>(t.blocks, i, fn) };
  });
}

/**
 * Update the latest block of `kind` in this turn or, failing that, in any earlier turn
 * (e.g. `report` may be placed after the streamed message), or append `create()` here.
 */
export function updateLastBlockAnyTurn<K extends Block["kind"]>(
  s: RunState,
  place: Placement,
  kind: K,
  fn: (b: BlockOf<K>) => BlockOf<K>,
  create: () => BlockOf<K>,
): RunState {
  const order = s.turns.filter((t) => t.index <= place.turn_index).sort((a, b) => b.index - a.index);
  for (const t of order) {
    const i = lastIndexOf(t.blocks, kind, false);
    if (i >= 0) {
      return withTurn(s, t.index, (turn) => ({ ...turn, blocks: replaceAt<Block, BlockOf<K>>(turn.blocks, i, fn) }));
    }
  }
  return pushBlock(s, place, create());
}

export function newMessage(documents: Document[]): MessageBlock {
  return { kind: "message", role: "report", draft: "", documents: [...documents], questions: [], report: null, done: false };
}

/** `docs` appended to `into`, skipping ids already there. */
export function mergeDocs(into: Document[], docs: Document[] | undefined): Document[] {
  const seen = new Set(into.map((d) => d.id));
  const out = into.slice();
  for (const d of docs ?? []) {
    if (d && !seen.has(d.id)) {
      seen.add(d.id);
      out.push(d);
    }
  }
  return out;
}

/** Add documents to the run's registry (first-seen order); `fetched` marks their pages as read. */
export function registerDocuments(s: RunState, docs: Document[] | undefined, fetched: boolean): RunState {
  if (!docs?.length) return s;
  let documents = s.documents;
  let seenOrder = s.seenOrder;
  let fetchedMap = s.fetched;
  for (const d of docs) {
    if (!d || typeof d.id !== "string") continue;
    if (!(d.id in documents)) {
      if (documents === s.documents) documents = { ...documents };
      if (seenOrder === s.seenOrder) seenOrder = seenOrder.slice();
      documents[d.id] = d;
      seenOrder.push(d.id);
    }
    if (fetched && !fetchedMap[d.id]) {
      if (fetchedMap === s.fetched) fetchedMap = { ...fetchedMap };
      fetchedMap[d.id] = true;
    }
  }
  return { ...s, documents, seenOrder, fetched: fetchedMap };
}
