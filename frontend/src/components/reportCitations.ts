// What the report's citation chips need: the cited sources by number, a stable `cite` lookup
// for the markdown renderer, and hover / click handling delegated from the report body.

import type { RefObject } from "preact";
import { useCallback, useMemo, useRef, useState } from "preact/hooks";
import type { CitationTarget } from "../markdown";
import { sourceLists } from "../timeline/selectors";
import type { RunState, VerifiedReport } from "../timeline/state";
import type { NumberedSource, UnsupportedClaim } from "../types";

/** Reasons keyed by `[n]#occurrence`, the chip they belong to. */
export function unsupportedByChip(claims: UnsupportedClaim[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const c of claims) m.set(`${c.marker}#${c.occurrence ?? 1}`, c.reason);
  return m;
}

export function useCitations(run: RunState, verified: VerifiedReport | null) {
  const lists = useMemo(() => sourceLists(run, verified), [run, verified]);
  const byNumber = useMemo(() => {
    const m = new Map<number, NumberedSource>();
    for (const s of lists.cited) m.set(s.number, s);
    return m;
  }, [lists]);
  // The markdown is rebuilt when `cite` changes, so keep it stable while the cited set is
  // the same: later packets (usage, summary) must not detach chips a reader is focused on.
  const byNumberRef = useRef(byNumber);
  byNumberRef.current = byNumber;
  const flags = useMemo(() => unsupportedByChip(verified?.unsupported ?? []), [verified]);
  const flagsRef = useRef(flags);
  flagsRef.current = flags;
  const citeKey = lists.cited.map((s) => `${s.number}:${s.title}`).join("\n") + [...flags].join("\n");
  const cite = useCallback(
    (n: number, occurrence: number): CitationTarget | null => {
      const s = byNumberRef.current.get(n);
      return s ? { number: n, title: s.title, unsupported: flagsRef.current.get(`[${n}]#${occurrence}`) } : null;
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [citeKey],
  );
  return { lists, byNumber, cite };
}

export interface ChipHover {
  n: number;
  top: number;
  left: number;
  unsupported?: string;
}

/**
 * Chips are plain DOM inside the sanitised markdown, so their events are delegated to the
 * report body: hovering or focusing one shows its card (placed inside `bodyRef`), a click
 * chooses its source, Escape hides the card.
 */
export function useChipEvents(bodyRef: RefObject<HTMLElement>, onChoose: (n: number) => void) {
  const [hover, setHover] = useState<ChipHover | null>(null);
  const chipOf = (e: Event) => (e.target instanceof Element ? (e.target.closest(".cite-chip") as HTMLElement | null) : null);
  const onOver = (e: Event) => {
    const chip = chipOf(e);
    const box = bodyRef.current?.getBoundingClientRect();
    if (!chip || !box) return;
    const r = chip.getBoundingClientRect();
    setHover({
      n: Number(chip.dataset.cite),
      top: r.bottom - box.top + 6,
      left: Math.max(0, Math.min(r.left - box.left, box.width - 320)),
      unsupported: chip.dataset.unsupported,
    });
  };
  const onOut = (e: Event) => {
    if (chipOf(e)) setHover(null);
  };
  const onClick = (e: Event) => {
    const chip = chipOf(e);
    if (chip) onChoose(Number(chip.dataset.cite));
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") setHover(null);
  };
  return { hover, handlers: { onMouseOver: onOver, onMouseOut: onOut, onFocusIn: onOver, onFocusOut: onOut, onClick, onKeyDown } };
}
