import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../format";
import { entryLabel, type HistoryEntry } from "../history";
import { Icon } from "./Icon";

interface Props {
  entry: HistoryEntry;
  current: boolean;
  date: string;
  onSelect: () => void;
  onRename: (title: string) => Promise<void>;
  onDelete: () => Promise<void>;
}

type Mode = "view" | "rename" | "confirm";

/**
 * One session in the history, with rename (inline) and delete (after an inline confirmation). Both
 * buttons are always in the tab order and show when the entry has the pointer or the focus; Escape
 * leaves a rename or a confirmation, and focus goes back to the button that opened it.
 */
export function SessionItem({ entry, current, date, onSelect, onRename, onDelete }: Props) {
  const { session } = entry;
  const [mode, setMode] = useState<Mode>("view");
  const [title, setTitle] = useState(session.title);
  const [error, setError] = useState<string | null>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  const deleteButton = useRef<HTMLButtonElement>(null);
  const keepButton = useRef<HTMLButtonElement>(null);
  const titleField = useRef<HTMLInputElement>(null);
  const returnTo = useRef<Mode>("view");
  const label = entryLabel(entry);

  useEffect(() => {
    if (mode === "rename") titleField.current?.focus();
    if (mode === "confirm") keepButton.current?.focus();
    if (mode === "view" && returnTo.current !== "view") {
      (returnTo.current === "rename" ? renameButton : deleteButton).current?.focus();
      returnTo.current = "view";
    }
  }, [mode]);

  const open = (next: Mode) => {
    returnTo.current = next;
    setError(null);
    setMode(next);
  };
  const act = async (work: () => Promise<void>) => {
    setError(null);
    try {
      await work();
      setMode("view");
    } catch (e) {
      setError(errorText(e));
    }
  };
  const escape = (e: KeyboardEvent) => {
    if (e.key !== "Escape") return;
    e.preventDefault();
    e.stopPropagation();
    setMode("view");
  };

  if (mode === "rename") {
    return (
      <li class="session-edit">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (title.trim()) void act(() => onRename(title.trim()));
          }}
          onKeyDown={escape}
        >
          <input aria-label="Session title" value={title} maxLength={200} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} ref={titleField} />
          <button type="submit" class="btn btn-ghost" disabled={!title.trim()}>
            Save
          </button>
          <button type="button" class="btn btn-ghost" onClick={() => setMode("view")}>
            Cancel
          </button>
        </form>
        {error ? <p class="small notice-error" role="alert">{error}</p> : null}
      </li>
    );
  }
  return (
    <li class={`session-item ${current ? "is-current" : ""}`}>
      <a href={`#/s/${encodeURIComponent(session.id)}`} class={current ? "current" : ""} aria-current={current ? "page" : undefined} onClick={onSelect} title={session.title || undefined}>
        <span class="session-title">{entry.title}</span>
        <span class="session-date">
          {date}
          {entry.repeat ? <span class="session-repeat">{date ? " · " : ""}#{entry.repeat}</span> : null}
        </span>
      </a>
      {mode === "confirm" ? (
        <div class="session-confirm" role="group" aria-label={`Delete ${label}?`} onKeyDown={escape}>
          <span class="small">Delete this research and its reports?</span>
          <button type="button" class="btn btn-danger" onClick={() => void act(onDelete)}>
            Delete
          </button>
          <button type="button" class="btn btn-ghost" ref={keepButton} onClick={() => setMode("view")}>
            Keep
          </button>
        </div>
      ) : (
        <div class="session-actions">
          <button
            type="button"
            class="btn btn-ghost"
            ref={renameButton}
            aria-label={`Rename ${label}`}
            title="Rename"
            onClick={() => {
              setTitle(session.title);
              open("rename");
            }}
          >
            <Icon name="pencil" />
          </button>
          <button type="button" class="btn btn-ghost" ref={deleteButton} aria-label={`Delete ${label}`} title="Delete" onClick={() => open("confirm")}>
            <Icon name="trash" />
          </button>
        </div>
      )}
      {error ? <p class="small notice-error" role="alert">{error}</p> : null}
    </li>
  );
}
