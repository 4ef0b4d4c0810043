import { useState } from "preact/hooks";
import { errorText } from "../format";
import { Icon } from "./Icon";

/** The signed-in user (SLEUTH_AUTH=accounts): their name, their API keys and signing out. */
export interface TopBarAccount {
  name: string;
  onSignOut: () => Promise<void>;
  /** The API keys page is open. */
  onKeysPage?: boolean;
}

/**
 * The bar above everything: the menu toggle (narrow screens), the brand, the title, the schedules,
 * the status pill and, where users sign in, who is signed in.
 */
export function TopBar({
  title,
  status,
  tone,
  navOpen,
  onToggleNav,
  onHome,
  account = null,
  schedulesOpen = false,
}: {
  title: string;
  status: string;
  tone: "warn" | "live" | "";
  navOpen: boolean;
  onToggleNav: () => void;
  onHome: () => void;
  account?: TopBarAccount | null;
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
          <Icon name="logo" class="logo" /> <span class="brand-name">Sleuth</span>
        </a>
        <span class="topbar-title">{title}</span>
        <span class="spacer" />
        <a class="topbar-link" href="#/schedules" aria-current={schedulesOpen ? "page" : undefined}>
          <Icon name="clock" /> <span class="topbar-link-label">Schedules</span>
        </a>
        {status ? <span class={`status-pill ${tone}`}>{status}</span> : null}
        {account ? <AccountMenu account={account} /> : null}
      </header>
      {/* Announced to screen readers; changes only at phase boundaries, not per token. */}
      <div class="sr-only" role="status" aria-live="polite" aria-atomic="true">
        {status}
      </div>
    </>
  );
}

function AccountMenu({ account }: { account: TopBarAccount }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const signOut = async () => {
    setBusy(true);
    setError(null);
    try {
      await account.onSignOut();
    } catch (e) {
      setError(`Could not sign out: ${errorText(e)}`);
      setBusy(false);
    }
  };
  return (
    <div class="topbar-account" role="group" aria-label="Your account">
      <span class="topbar-user" title={`Signed in as ${account.name}`}>
        <span class="sr-only">Signed in as </span>
        {account.name}
      </span>
      <a class="btn btn-ghost" href="#/keys" aria-current={account.onKeysPage ? "page" : undefined}>
        API keys
      </a>
      <button type="button" class="btn btn-ghost" disabled={busy} onClick={() => void signOut()}>
        {busy ? "Signing out…" : "Sign out"}
      </button>
      {error ? (
        <span class="small notice-error topbar-error" role="alert">
          {error}
        </span>
      ) : null}
    </div>
  );
}
