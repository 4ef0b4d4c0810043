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

/**
 * Why the server sent the browser back from a single sign-on (`#/signin?sso_error=CODE`,
 * backend/sleuth/api/routes/sso.py), in the reader's words. Only these codes are shown as themselves:
 * anything else in the address reads as the general sentence.
 */
const SSO_REFUSALS = new Map<string, string>([
  ["expired", "That sign-in took too long or was started in another browser. Try again."],
  ["state_mismatch", "That sign-in was not the one this browser started. Try again."],
  ["provider_refused", "The sign-in provider did not sign you in."],
  ["no_code", "The sign-in provider sent no sign-in code. Try again."],
  ["token_invalid", "The sign-in provider's answer could not be verified. Try again, or ask whoever runs this server."],
  ["provider_unavailable", "The sign-in provider cannot be reached just now. Try again later."],
  ["not_configured", "Single sign-on is not set up on this server."],
  ["disabled", "This account is disabled. Ask an administrator."],
  ["domain_not_allowed", "Accounts with your e-mail domain may not sign in to this server."],
  ["email_not_verified", "This server admits only some e-mail domains, and the provider did not confirm your e-mail address."],
  [
    "email_taken_unverified",
    "An account with your e-mail address exists, but the provider does not say the address is verified. Verify it there, or ask an administrator.",
  ],
  ["already_linked", "The account with your e-mail address is linked to another sign-in. Ask an administrator."],
  ["no_free_name", "No user name could be found for your account. Ask an administrator."],
]);
export const SSO_REFUSED = "Single sign-on did not sign you in.";

/** The sentence for a refused single sign-on named in the address's hash; null when none was. */
export function ssoRefusal(hash: string): string | null {
  const match = /^#\/signin\?(.*)$/.exec(hash);
  if (!match) return null;
  const code = new URLSearchParams(match[1]).get("sso_error");
  if (code === null) return null;
  return SSO_REFUSALS.get(code) ?? SSO_REFUSED;
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
  const [ssoError] = useState(() => ssoRefusal(window.location.hash));
  const passwordField = useRef<HTMLInputElement>(null);
  const userField = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const before = document.title;
    document.title = "Sign in · Sleuth";
    // Someone signing in again has their name filled in already: the password is next.
    (name ? passwordField : userField).current?.focus();
    // Said once: a reload, or the page after signing in, does not bring it back.
    if (ssoError) history.replaceState(null, "", "#/");
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
        {ssoError ? (
          <p class="notice notice-error" role="alert">
            {ssoError}
          </p>
        ) : null}
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
