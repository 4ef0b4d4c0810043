import { useEffect, useReducer, useRef } from "preact/hooks";
import * as api from "./api";
import { accountReducer, initialAccount, pageKey, signedInUser } from "./account";
import { App } from "./app";
import { onUnauthorized, setToken } from "./auth";
import { SignIn } from "./components/SignIn";
import { forgetSourceChoices } from "./components/SourcePicker";
import { TokenPrompt } from "./components/TokenPrompt";

/**
 * Who the page is for, then the page. Asks the server who the caller is; a caller it does not know
 * signs in (SLEUTH_AUTH=accounts) or gives the shared token (token). A 401 later covers the page
 * with the sign-in form and keeps the page under it; signing out (or another user signing in)
 * renders the page afresh, with nothing of the previous user's in it.
 */
export function Root() {
  const [state, dispatch] = useReducer(accountReducer, initialAccount);
  const mode = useRef(state.mode);
  mode.current = state.mode;

  useEffect(() => {
    let cancelled = false;
    /** The server does not know the caller: ask for what its mode wants. */
    const unauthorized = async () => {
      const known = mode.current === "accounts" || mode.current === "token" ? mode.current : await api.getAuthMode();
      // A shared token kept from before the server had accounts would be refused on every request.
      if (known === "accounts") setToken(null);
      if (!cancelled) dispatch({ type: "unauthorized", mode: known });
    };
    api
      .getMe()
      .then((me) => (me ? dispatch({ type: "known", me }) : unauthorized()))
      .catch(() => !cancelled && dispatch({ type: "unreachable" }));
    const stop = onUnauthorized(() => {
      unauthorized().catch(() => !cancelled && dispatch({ type: "unauthorized", mode: "token" }));
    });
    return () => {
      cancelled = true;
      stop();
    };
  }, []);

  if (state.checking) return null;
  const user = signedInUser(state);
  const signIn =
    state.ask === "signIn" ? (
      <SignIn over={!!state.user} reason={state.reason} name={state.user?.name} onSignedIn={(me) => dispatch({ type: "signedIn", me })} />
    ) : null;
  if (state.mode === "accounts" && !state.user) return signIn;

  const signOut = async () => {
    await api.signOut();
    forgetSourceChoices();
    // The next user starts on the welcome page, not on this user's session.
    if (window.location.hash) history.replaceState(null, "", "#/");
    dispatch({ type: "signedOut" });
  };
  return (
    <>
      <App
        key={pageKey(state)}
        account={user ? { name: user.name, isAdmin: user.isAdmin, hasPassword: user.hasPassword, onSignOut: signOut } : null}
        signIns={state.signIns}
        covered={state.ask !== null}
      />
      {state.ask === "token" ? <TokenPrompt onSaved={() => window.location.reload()} /> : null}
      {signIn}
    </>
  );
}
