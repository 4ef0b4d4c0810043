import { Icon } from "./Icon";

/** The bar above everything: the menu toggle (narrow screens), the brand, the title, the schedules and the status pill. */
export function TopBar({
  title,
  status,
  tone,
  navOpen,
  onToggleNav,
  onHome,
  schedulesOpen = false,
}: {
  title: string;
  status: string;
  tone: "warn" | "live" | "";
  navOpen: boolean;
  onToggleNav: () => void;
  onHome: () => void;
  /** The schedules page (or one schedule) is open. */
  schedulesOpen?: boolean;
}) {
  return (
    <>
      <header class="topbar">
        <button type="button" class="btn btn-ghost nav-toggle" aria-expanded={navOpen} aria-controls="sidebar" onClick={onToggleNav}>
          <span aria-hidden="true">☰</span>
          <span class="sr-only">Sessions</span>
        </button>
        <a class="brand" href="#/" onClick={onHome}>
          <Icon name="logo" class="logo" /> Sleuth
        </a>
        <span class="topbar-title">{title}</span>
        <span class="spacer" />
        <a class="topbar-link" href="#/schedules" aria-current={schedulesOpen ? "page" : undefined}>
          <Icon name="clock" /> Schedules
        </a>
        {status ? <span class={`status-pill ${tone}`}>{status}</span> : null}
      </header>
      {/* Announced to screen readers; changes only at phase boundaries, not per token. */}
      <div class="sr-only" role="status" aria-live="polite" aria-atomic="true">
        {status}
      </div>
    </>
  );
}
