import type { SessionSummary } from "../api";

interface Props {
  sessions: SessionSummary[];
  currentId: string | null;
  error: string | null;
  onNew: () => void;
  onSelect: () => void;
}

export function Sidebar({ sessions, currentId, error, onNew, onSelect }: Props) {
  return (
    <nav class="sidebar" aria-label="Research sessions">
      <button type="button" class="btn btn-primary new-chat" onClick={onNew}>
        + New research
      </button>
      <h2 class="sidebar-h">History</h2>
      {error ? <p class="muted small">Could not load sessions: {error}</p> : null}
      {!error && !sessions.length ? <p class="muted small">No sessions yet.</p> : null}
      <ul class="session-list">
        {sessions.map((s) => (
          <li key={s.id}>
            <a
              href={`#/s/${encodeURIComponent(s.id)}`}
              class={s.id === currentId ? "current" : ""}
              aria-current={s.id === currentId ? "page" : undefined}
              onClick={onSelect}
              title={s.title || s.id}
            >
              <span class="session-title">{s.title || "Untitled research"}</span>
              {s.createdAt ? <span class="session-date">{formatDate(s.createdAt)}</span> : null}
            </a>
          </li>
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
