import { useState } from "preact/hooks";
import { errorText } from "../format";
import type { SessionSummary } from "../api";
import { Icon } from "./Icon";

interface Props {
  session: SessionSummary;
  current: boolean;
  date: string;
  onSelect: () => void;
  onRename: (title: string) => Promise<void>;
  onDelete: () => Promise<void>;
}

/** One session in the history, with rename (inline) and delete (after an inline confirmation). */
export function SessionItem({ session, current, date, onSelect, onRename, onDelete }: Props) {
  const [mode, setMode] = useState<"view" | "rename" | "confirm">("view");
  const [title, setTitle] = useState(session.title);
  const [error, setError] = useState<string | null>(null);
  const label = session.title || "Untitled research";

  const act = async (work: () => Promise<void>) => {
    setError(null);
    try {
      await work();
      setMode("view");
    } catch (e) {
      setError(errorText(e));
    }
  };

  if (mode === "rename") {
    return (
      <li class="session-edit">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (title.trim()) void act(() => onRename(title.trim()));
          }}
        >
          <input aria-label="Session title" value={title} maxLength={200} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} autoFocus />
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
    <li class="session-item">
      <a href={`#/s/${encodeURIComponent(session.id)}`} class={current ? "current" : ""} aria-current={current ? "page" : undefined} onClick={onSelect} title={label}>
        <span class="session-title">{label}</span>
        {date ? <span class="session-date">{date}</span> : null}
      </a>
      {mode === "confirm" ? (
        <div class="session-confirm" role="group" aria-label={`Delete ${label}?`}>
          <span class="small">Delete this research and its reports?</span>
          <button type="button" class="btn btn-danger" onClick={() => void act(onDelete)}>
            Delete
          </button>
          <button type="button" class="btn btn-ghost" onClick={() => setMode("view")}>
            Keep
          </button>
        </div>
      ) : (
        <div class="session-actions">
          <button type="button" class="btn btn-ghost" aria-label={`Rename ${label}`} onClick={() => { setTitle(session.title); setMode("rename"); }}>
            <Icon name="pencil" />
          </button>
          <button type="button" class="btn btn-ghost" aria-label={`Delete ${label}`} onClick={() => setMode("confirm")}>
            <Icon name="trash" />
          </button>
        </div>
      )}
      {error ? <p class="small notice-error" role="alert">{error}</p> : null}
    </li>
  );
}
