import type { RefObject } from "preact";
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import * as api from "./api";
import { parseRoute, type Route } from "./route";
import { errorText } from "./format";
import { pollReadiness, type Readiness } from "./warmup";

/**
 * Where the URL points (#/s/<id>, #/s/<id>/r/<run>, #/schedules, #/schedules/<id>), so a reload or a
 * shared link reopens it; `navigate` opens a session (null: a new one).
 */
export function useHashRoute(): [Route, (sessionId: string | null) => void] {
  const [route, setRoute] = useState<Route>(() => parseRoute(window.location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  const navigate = (next: string | null) => {
    const hash = next ? `#/s/${encodeURIComponent(next)}` : "#/";
    if (window.location.hash !== hash) window.location.hash = hash;
    setRoute(parseRoute(hash));
  };
  return [route, navigate];
}

/** Current time, ticking every second while `active`. */
export function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [active]);
  return now;
}

/**
 * Follow the live end of a scrolling element while the reader is there; leave them alone once
 * they scroll up to read. `follow()` sticks to the end again (after the reader sends something);
 * a new `resetKey` (another session) does too.
 */
export function useFollowEnd<E extends HTMLElement>(resetKey: unknown) {
  const ref = useRef<E>(null);
  const stick = useRef(true);
  const lastHeight = useRef(0);
  const onScroll = () => {
    const el = ref.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 120;
  };
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || el.scrollHeight === lastHeight.current) return;
    lastHeight.current = el.scrollHeight;
    if (stick.current) el.scrollTop = el.scrollHeight;
  });
  useEffect(() => {
    stick.current = true;
  }, [resetKey]);
  const follow = () => {
    stick.current = true;
  };
  /** Stop following: something other than the live end was brought into view. */
  const release = () => {
    stick.current = false;
  };
  // Read by effects that act only while the reader is at the live end.
  const isFollowing = () => stick.current;
  return { ref, onScroll, follow, release, isFollowing };
}

/** The server's readiness, polled until it is ready; null until it first answers. */
export function useReadiness(): Readiness | null {
  const [readiness, setReadiness] = useState<Readiness | null>(null);
  useEffect(() => pollReadiness(api.getReadiness, setReadiness), []);
  return readiness;
}

/** The sidebar's session list, filtered by `query` when it has text; `refresh` reloads it. */
export function useSessionList(query: string) {
  const [sessions, setSessions] = useState<api.SessionSummary[]>([]);
  const [error, setError] = useState<string | null>(null);
  const refresh = useCallback(() => {
    (query.trim() ? api.searchSessions(query.trim()) : api.listSessions())
      .then((s) => {
        setSessions(s);
        setError(null);
      })
      .catch((e: unknown) => setError(errorText(e)));
  }, [query]);
  useEffect(refresh, [refresh]);
  return { sessions, error, refresh };
}

/**
 * A `<details>` used as a popover (a menu, a picker) closes as one: on Escape, with focus back on
 * its summary when it was inside, and on a press anywhere outside it.
 */
export function usePopover(ref: RefObject<HTMLDetailsElement>): void {
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      const el = ref.current;
      if (e.key !== "Escape" || !el?.open) return;
      const inside = el.contains(document.activeElement);
      el.open = false;
      if (inside) el.querySelector("summary")?.focus();
    };
    const onPointerDown = (e: PointerEvent) => {
      const el = ref.current;
      if (el?.open && !el.contains(e.target as Node)) el.open = false;
    };
    document.addEventListener("keydown", onKeyDown);
    document.addEventListener("pointerdown", onPointerDown);
    return () => {
      document.removeEventListener("keydown", onKeyDown);
      document.removeEventListener("pointerdown", onPointerDown);
    };
  }, [ref]);
}
