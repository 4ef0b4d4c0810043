import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../format";
import { usePopover } from "../hooks";
import { listSources, type SourceInfo } from "../api";
import { accessBadge, sourceDetail } from "../sources";
import { Uploads } from "./Uploads";
import type { SourceRoute } from "../timeline/state";

const LAST_KEY = "sleuth.sources.last";
const keyFor = (sessionId: string | null) => (sessionId ? `sleuth.sources.${sessionId}` : LAST_KEY);

function read(key: string): string[] | null {
  try {
    const value = JSON.parse(localStorage.getItem(key) ?? "null");
    return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : null;
  } catch {
    return null;
  }
}

/** Forget every session's choice (a sign-out: the next user of this browser has other sessions). */
export function forgetSourceChoices(): void {
  try {
    const mine = Array.from({ length: localStorage.length }, (_, i) => localStorage.key(i)).filter(
      (key): key is string => !!key && key.startsWith("sleuth.sources."),
    );
    for (const key of mine) localStorage.removeItem(key);
  } catch {
    /* storage disabled: nothing was kept */
  }
}

/**
 * The sources chosen for a session (null: the server's defaults), remembered per session. A new
 * session starts from the last choice made anywhere.
 */
export function useSourceChoice(sessionId: string | null): [string[] | null, (names: string[] | null) => void] {
  const [chosen, setChosen] = useState<string[] | null>(() => read(keyFor(sessionId)) ?? read(LAST_KEY));
  useEffect(() => setChosen(read(keyFor(sessionId)) ?? read(LAST_KEY)), [sessionId]);
  const update = useCallback(
    (names: string[] | null) => {
      setChosen(names);
      for (const key of new Set([keyFor(sessionId), LAST_KEY])) {
        if (names === null) localStorage.removeItem(key);
        else localStorage.setItem(key, JSON.stringify(names));
      }
    },
    [sessionId],
  );
  return [chosen, update];
}

const STARTING_RECHECK_MS = 1000;

interface Props {
  chosen: string[] | null;
  onChange: (names: string[] | null) => void;
  disabled: boolean;
}

/** "Search in": a checkbox per source, with document counts and whose it is, and a way to add files. */
export function SourcePicker({ chosen, onChange, disabled }: Props) {
  const [sources, setSources] = useState<SourceInfo[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [uploading, setUploading] = useState(false);
  const menuRef = useRef<HTMLDetailsElement>(null);
  usePopover(menuRef);
  const refresh = useCallback(() => {
    listSources()
      .then((s) => {
        setSources(s);
        setError(null);
      })
      .catch((e: unknown) => setError(errorText(e)));
  }, []);
  useEffect(refresh, [refresh]);
  // While the menu is open, an MCP server still starting is asked about again until it has
  // started or failed, so its tools appear without closing and reopening the menu.
  const [open, setOpen] = useState(false);
  const starting = sources.some((s) => s.state === "starting");
  useEffect(() => {
    if (!open || !starting) return;
    const timer = setTimeout(refresh, STARTING_RECHECK_MS);
    return () => clearTimeout(timer);
  }, [open, starting, sources, refresh]);

  // A remembered name that no longer exists (a deleted collection) is dropped from the choice.
  const known = new Set(sources.map((s) => s.name));
  const selected = chosen === null ? sources.filter((s) => s.default).map((s) => s.name) : chosen.filter((n) => known.has(n) || !sources.length);
  const toggle = (name: string, box: HTMLInputElement) => {
    const next = box.checked ? [...selected, name] : selected.filter((n) => n !== name);
    if (!next.length) {
      box.checked = true; // a run searches at least one source; "Use defaults" resets
      return;
    }
    onChange(sources.map((s) => s.name).filter((n) => next.includes(n)));
  };
  const label = chosen === null ? "Default sources" : selected.length === 1 ? selected[0] : `${selected.length} sources`;

  return (
    <>
      {/* Listed again on opening: an MCP server may have started (or stopped) since. */}
      <details class="source-picker" ref={menuRef} onToggle={(e) => {
          const isOpen = (e.currentTarget as HTMLDetailsElement).open;
          setOpen(isOpen);
          if (isOpen) refresh();
        }}>
        <summary class={disabled ? "disabled" : ""} aria-label={`Sources to search: ${label}`}>
          Search in: <strong>{label}</strong>
        </summary>
        <div class="source-picker-menu" role="group" aria-label="Sources to search">
          {error ? <p class="notice notice-error small">{error}</p> : null}
          {sources.map((s) => {
            const detail = sourceDetail(s);
            const badge = accessBadge(s);
            return (
              <label key={s.name} class="source-option" title={detail.problem ?? undefined}>
                <input type="checkbox" checked={selected.includes(s.name)} disabled={disabled} onChange={(e) => toggle(s.name, e.currentTarget as HTMLInputElement)} />
                <span class="source-name">
                  {s.name}
                  {badge ? (
                    <span class={`badge source-access source-access-${badge.text}`} title={badge.title}>
                      {badge.text}
                    </span>
                  ) : null}
                </span>
                <span class={detail.problem ? "small source-problem" : "muted small"}>{detail.text}</span>
                {detail.problem ? <span class="small source-problem source-reason">{detail.problem}</span> : null}
              </label>
            );
          })}
          <div class="source-picker-actions">
            <button type="button" class="btn btn-ghost btn-small" disabled={chosen === null} onClick={() => onChange(null)}>
              Use defaults
            </button>
            <button
              type="button"
              class="btn btn-ghost btn-small"
              onClick={() => {
                if (menuRef.current) menuRef.current.open = false;
                setUploading(true);
              }}
            >
              Add files…
            </button>
          </div>
        </div>
      </details>
      {uploading ? (
        <Uploads
          collections={sources.filter((s) => s.kind === "local" && s.editable !== false).map((s) => s.name)}
          onClose={() => {
            setUploading(false);
            refresh();
          }}
        />
      ) : null}
    </>
  );
}

/** The sources a run searched, as shown on the run. */
/** What a run searches: with routing, the collections that fit its question (each with why) and
 * those left out; otherwise the source names. */
export function RunSources({ names, routes = [] }: { names: string[]; routes?: SourceRoute[] }) {
  if (!routes.length) {
    if (!names.length) return null;
    return (
      <span class="run-sources muted" title="Sources this run searched">
        Searched: {names.join(", ")}
      </span>
    );
  }
  const routed = new Set(routes.map((r) => r.name));
  const searched = routes.filter((r) => r.searched);
  const others = names.filter((n) => !routed.has(n));
  const leftOut = routes.filter((r) => !r.searched);
  return (
    <span class="run-sources muted" title="Collections that fit the question are searched; the others are left out">
      Searched:{" "}
      {searched.map((r, i) => (
        <span key={r.name} class="run-route">
          {i ? "; " : ""}
          {r.name} <span class="run-route-reason">({r.reason})</span>
        </span>
      ))}
      {others.length ? `${searched.length ? "; " : ""}${others.join(", ")}` : null}
      {leftOut.length ? (
        <span class="run-route-out">
          {" "}
          · not searched: {leftOut.map((r) => r.name).join(", ")} (they do not fit the question)
        </span>
      ) : null}
    </span>
  );
}
