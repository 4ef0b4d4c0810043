// Who the page is for, as a pure reducer: the server's SLEUTH_AUTH mode, the signed-in user, and
// what covers the page (the sign-in form or the token prompt). The page itself is keyed by the
// user, so a sign-out, or another user signing in, starts it afresh: nothing one user loaded
// (history, sessions, run streams) is left in memory for the next.

import type { AuthMode, Me } from "./api";

export type Ask = "signIn" | "token";

export interface AccountState {
  /** Still asking the server who the caller is. */
  checking: boolean;
  /** Null until the server has said (or could not be reached). */
  mode: AuthMode | null;
  /** Whom the page shows; null before anyone has signed in and after a sign-out. */
  user: Me | null;
  /** What covers the page: nothing, the sign-in form, or the API token prompt. */
  ask: Ask | null;
  /** Why the sign-in form is back while the page stays under it. */
  reason: string | null;
  /** Counts sign-ins: the page reloads what failed while its user was signed out. */
  signIns: number;
}

export type AccountAction =
  | { type: "known"; me: Me }
  | { type: "unauthorized"; mode: AuthMode }
  | { type: "unreachable" }
  | { type: "signedIn"; me: Me }
  | { type: "signedOut" };

export const initialAccount: AccountState = { checking: true, mode: null, user: null, ask: null, reason: null, signIns: 0 };

export const SIGN_IN_ENDED = "Your sign-in has ended. Sign in again to carry on where you were.";

export function accountReducer(state: AccountState, action: AccountAction): AccountState {
  switch (action.type) {
    case "known":
      return { ...state, checking: false, mode: action.me.auth, user: action.me, ask: null, reason: null };
    case "unauthorized": {
      const ask: Ask | null = action.mode === "accounts" ? "signIn" : action.mode === "token" ? "token" : null;
      const reason = ask === "signIn" && state.user ? SIGN_IN_ENDED : null;
      return { ...state, checking: false, mode: action.mode, ask, reason };
    }
    case "unreachable":
      // The page shows the server's trouble itself, as it did before accounts.
      return { ...state, checking: false };
    case "signedIn":
      return { ...state, checking: false, mode: action.me.auth, user: action.me, ask: null, reason: null, signIns: state.signIns + 1 };
    case "signedOut":
      return { ...state, checking: false, mode: "accounts", user: null, ask: "signIn", reason: null };
  }
}

/** The key the page is rendered under: a new user gets a new page, the same user keeps theirs. */
export function pageKey(state: AccountState): string {
  return state.user ? `user:${state.user.name}` : "anonymous";
}

/** The user's name and sign-out show only where users sign in. */
export function signedInUser(state: AccountState): Me | null {
  return state.mode === "accounts" && state.user ? state.user : null;
}
