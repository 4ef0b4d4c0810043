import { useState } from "preact/hooks";
import { ApiError, changePassword as serverChange, WRONG_CURRENT_PASSWORD } from "../api";
import { errorText } from "../format";

export const PASSWORD_CHANGED = "Password changed. Your other sign-ins have ended; this one goes on.";

/** Why the form cannot be sent yet (the server judges the password itself); null when it can. */
export function newPasswordProblem(next: string, again: string): string | null {
  return again && next !== again ? "The two new passwords differ." : null;
}

/** What to tell someone whose change was refused: the server's words, as a sentence. */
export function passwordChangeError(e: unknown): string {
  if (!(e instanceof ApiError)) return "Could not reach the server. Try again in a moment.";
  if (e.status === 401 && e.detail === WRONG_CURRENT_PASSWORD) return "The current password is wrong.";
  const text = errorText(e);
  return text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? "" : ".");
}

/** The caller's password: the current one, the new one twice. */
export function PasswordChange({ change = serverChange }: { change?: (current: string, next: string) => Promise<void> }) {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const problem = newPasswordProblem(next, again);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!current || !next || next !== again || busy) return;
    setBusy(true);
    setError(null);
    setDone(false);
    try {
      await change(current, next);
      setCurrent("");
      setNext("");
      setAgain("");
      setDone(true);
    } catch (err) {
      setError(passwordChangeError(err));
    } finally {
      setBusy(false);
    }
  };
  const field = (id: string, label: string, value: string, set: (v: string) => void, autoComplete: string) => (
    <label class="keys-field" for={id}>
      <span>{label}</span>
      <input
        id={id}
        type="password"
        autoComplete={autoComplete}
        value={value}
        onInput={(e) => {
          set((e.target as HTMLInputElement).value);
          setDone(false);
        }}
        required
      />
    </label>
  );

  return (
    <form class="card keys-create password-change" aria-labelledby="password-title" onSubmit={submit} noValidate>
      <h2 id="password-title" class="card-title">
        Password
      </h2>
      <div class="keys-create-row">
        {field("password-current", "Current password", current, setCurrent, "current-password")}
        {field("password-new", "New password", next, setNext, "new-password")}
        {field("password-again", "New password again", again, setAgain, "new-password")}
        <button type="submit" class="btn btn-primary" disabled={busy || !current || !next || next !== again}>
          {busy ? "Changing…" : "Change password"}
        </button>
      </div>
      {problem ? <p class="small muted">{problem}</p> : null}
      {error ? (
        <p class="notice notice-error" role="alert">
          {error}
        </p>
      ) : null}
      <p class="small" role="status">
        {done ? PASSWORD_CHANGED : ""}
      </p>
    </form>
  );
}
