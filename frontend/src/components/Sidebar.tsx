import type { SessionSummary } from "../api";
import { historyEntries } from "../history";
import { SessionItem } from "./SessionItem";

interface Props {
  sessions: SessionSummary[];
  currentId: string | null;
  error: string | null;
  onNew: () => void;
  onSelect: () => void;
  query?: string;
  onSearch?: (query: string) => void;
  onRename?: (id: string, title: string) => Promise<void>;
  onDelete?: (id: string) => Promise<void>;
}

export function Sidebar({ sessions, currentId, error, onNew, onSelect, query = "", onSearch, onRename, onDelete }: Props) {
  return (
    <nav class="sidebar" aria-label="Research sessions">
      <button type="button" class="btn btn-primary new-chat" onClick={onNew}>
        + New research
      </button>
      <h2 class="sidebar-h">History</h2>
      {onSearch ? (
        <input
          type="search"
          class="session-search"
          aria-label="Search history by title"
          placeholder="Search by title"
          value={query}
          onInput={(e) => onSearch((e.target as HTMLInputElement).value)}
        />
      ) : null}
      {error ? <p class="muted small">Could not load sessions: {error}</p> : null}
      {!error && !sessions.length ? <p class="muted small">{query ? "No session title matches." : "No sessions yet."}</p> : null}
      <ul class="session-list">
        {historyEntries(sessions).map((entry) => (
          <SessionItem
            key={entry.session.id}
            entry={entry}
            current={entry.session.id === currentId}
            date={entry.session.createdAt ? formatDate(entry.session.createdAt) : ""}
            onSelect={onSelect}
            onRename={(title) => (onRename ? onRename(entry.session.id, title) : Promise.resolve())}
            onDelete={() => (onDelete ? onDelete(entry.session.id) : Promise.resolve())}
          />
        ))}
      </ul>
    </nav>
  );
}

function formatDate(iso: string): string {
  const d = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : iso + "Z");
  if (Number.isNaN(d.getTime())) return "";
  return d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}
