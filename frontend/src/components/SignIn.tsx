import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, getSingleSignOn, signIn as serverSignIn, type Me, type SingleSignOn } from "../api";
import { errorText } from "../format";
import { Icon } from "./Icon";

/** What to tell someone whose sign-in failed: the server's words, and "later" for the limit. */
export function signInError(e: unknown): string {
  if (e instanceof ApiError && e.status === 429) return "Too many failed sign-ins. Try again later.";
  if (!(e instanceof ApiError)) return "Could not reach the server. Try again in a moment.";
  const text = errorText(e);
  return text ? text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? "" : ".") : "Could not sign in.";
}

interface Props {
  /** Over a page whose sign-in ended (kept under the form), rather than a page of its own. */
  over: boolean;
  /** Why the form is shown again, if it is. */
  reason: string | null;
  /** The user whose sign-in ended, to sign in again. */
  name?: string;
  onSignedIn: (me: Me) => void;
  signIn?: (username: string, password: string) => Promise<Me>;
  /** The server's single sign-on provider, if any: offered above the password form. */
  loadSso?: () => Promise<SingleSignOn | null>;
}

/** User name and password (SLEUTH_AUTH=accounts); the server's refusal is shown under the form. */
export function SignIn({ over, reason, name = "", onSignedIn, signIn = serverSignIn, loadSso = getSingleSignOn }: Props) {
  const [username, setUsername] = useState(name);
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [sso, setSso] = useState<SingleSignOn | null>(null);
  const passwordField = useRef<HTMLInputElement>(null);
  const userField = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const before = document.title;
    document.title = "Sign in · Sleuth";
    // Someone signing in again has their name filled in already: the password is next.
    (name ? passwordField : userField).current?.focus();
    return () => {
      document.title = before;
    };
  }, []);

  useEffect(() => {
    let cancelled = false;
    loadSso()
      .then((found) => !cancelled && setSso(found))
      .catch(() => undefined); // without it, the password form still works
    return () => {
      cancelled = true;
    };
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!username.trim() || !password || busy) return;
    setBusy(true);
    setError(null);
    try {
      const me = await signIn(username.trim(), password);
      onSignedIn(me);
    } catch (err) {
      setError(signInError(err));
      setPassword("");
      passwordField.current?.focus();
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class={over ? "signin-backdrop" : "signin-page"}>
      <form
        class="card signin-card"
        role={over ? "dialog" : "form"}
        aria-modal={over ? "true" : undefined}
        aria-labelledby="signin-title"
        onSubmit={submit}
        noValidate
      >
        <p class="signin-brand">
          <Icon name="logo" class="logo" /> Sleuth
        </p>
        <h1 id="signin-title">Sign in</h1>
        {reason ? <p class="notice notice-info">{reason}</p> : null}
        {sso ? (
          <>
            <a class="btn btn-primary signin-sso" href={sso.loginUrl}>
              Sign in with {sso.name}
            </a>
            <p class="signin-or muted small">or with a user name and password</p>
          </>
        ) : null}
        <label for="signin-user">User name</label>
        <input
          id="signin-user"
          name="username"
          autoComplete="username"
          autoCapitalize="none"
          spellcheck={false}
          value={username}
          onInput={(e) => setUsername((e.target as HTMLInputElement).value)}
          ref={userField}
          required
        />
        <label for="signin-password">Password</label>
        <input
          id="signin-password"
          name="password"
          type="password"
          autoComplete="current-password"
          ref={passwordField}
          value={password}
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          required
        />
        {error ? (
          <p class="notice notice-error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" class="btn btn-primary" disabled={busy || !username.trim() || !password}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p class="muted small">Forgot your password? Whoever runs this server can set a new one.</p>
      </form>
    </div>
  );
}
