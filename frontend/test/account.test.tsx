// Accounts in the UI: the CSRF header on changes signed in by cookie, who the page is for, the
// sign-in form's messages, the API keys page, and a sign-out that leaves nothing of the user behind.

import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";
import { accountReducer, initialAccount, pageKey, signedInUser, SIGN_IN_ENDED, type AccountState } from "../src/account";
import {
  ApiError,
  changePassword,
  createKey,
  deleteKey,
  listKeys,
  listSessions,
  WRONG_CURRENT_PASSWORD,
  type ApiKey,
  type Me,
  type NewApiKey,
} from "../src/api";
import { authHeaders, csrfFromCookies, onUnauthorized, setToken } from "../src/auth";
import { ApiKeys, expiryText, type KeysApi } from "../src/components/ApiKeys";
import { PASSWORD_CHANGED, PasswordChange, passwordChangeError } from "../src/components/PasswordChange";
import { SignIn, signInError, SSO_REFUSED, ssoRefusal } from "../src/components/SignIn";
import { Root } from "../src/root";
import { testRoot } from "./dom";

const root = testRoot();

const ada: Me = { name: "ada", isAdmin: false, auth: "accounts", hasPassword: true };
const bob: Me = { name: "bob", isAdmin: false, auth: "accounts", hasPassword: false };

function setCookie(value: string | null): void {
  document.cookie = value === null ? "sleuth_csrf=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/" : `sleuth_csrf=${value}; path=/`;
}

const jsonResponse = (body: unknown, status = 200) =>
  new Response(status === 204 ? null : JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

afterEach(() => {
  setToken(null);
  setCookie(null);
  localStorage.clear();
  window.location.hash = "";
  vi.unstubAllGlobals();
});

function type(input: Element | null, value: string): void {
  const el = input as HTMLInputElement;
  act(() => {
    el.value = value;
    el.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

function press(button: Element | null | undefined): void {
  act(() => (button as HTMLElement).click());
}

const byText = (selector: string, text: string) =>
  Array.from(root.querySelectorAll<HTMLElement>(selector)).find((el) => el.textContent?.trim() === text) ?? null;

describe("the CSRF header", () => {
  it("is read from the sleuth_csrf cookie among others", () => {
    expect(csrfFromCookies("a=1; sleuth_csrf=tok%3Dx; b=2")).toBe("tok=x");
    expect(csrfFromCookies("sleuth_csrf_old=1; a=2")).toBeNull();
    expect(csrfFromCookies("")).toBeNull();
  });

  it("goes with changes signed in by cookie, never with reads or with a bearer token", () => {
    const cookies = "theme=dark; sleuth_csrf=c5rf";
    for (const method of ["POST", "PATCH", "DELETE", "put"]) expect(authHeaders(method, cookies)).toEqual({ "X-CSRF-Token": "c5rf" });
    for (const method of ["GET", "HEAD", "OPTIONS"]) expect(authHeaders(method, cookies)).toEqual({});
    expect(authHeaders("POST", "theme=dark")).toEqual({}); // not signed in by cookie
    setToken("shared");
    expect(authHeaders("POST", cookies)).toEqual({ Authorization: "Bearer shared" });
  });

  it("is sent by the API helpers on a change and not on a read", async () => {
    setCookie("c5rf");
    const fetchMock = vi.fn(async (_url: string, init?: RequestInit) =>
      init?.method === "DELETE" ? new Response(null, { status: 204 }) : jsonResponse([]),
    );
    vi.stubGlobal("fetch", fetchMock);
    await listKeys();
    await listSessions();
    await deleteKey("k_1");
    const headers = fetchMock.mock.calls.map(([, init]) => (init?.headers ?? {}) as Record<string, string>);
    expect(headers[0]["X-CSRF-Token"]).toBeUndefined();
    expect(headers[1]["X-CSRF-Token"]).toBeUndefined();
    expect(headers[2]["X-CSRF-Token"]).toBe("c5rf");
  });

  it("goes with a new key's request body as the server's schema names it", async () => {
    setCookie("c5rf");
    const made = { id: "k_1", name: "ci", created_at: "2026-01-01T00:00:00", expires_at: null, last_used_at: null, key: "sk_sleuth_x" };
    const fetchMock = vi.fn(async (_url: string, _init?: RequestInit) => jsonResponse(made, 201));
    vi.stubGlobal("fetch", fetchMock);
    const key = await createKey("ci", 30);
    const [url, init] = fetchMock.mock.calls[0];
    expect(url).toBe("/api/keys");
    expect(JSON.parse(init?.body as string)).toEqual({ name: "ci", expires_in_days: 30 });
    expect((init?.headers as Record<string, string>)["X-CSRF-Token"]).toBe("c5rf");
    expect(key).toMatchObject({ id: "k_1", key: "sk_sleuth_x", expiresAt: null });
  });
});

describe("accountReducer", () => {
  const signedIn = (me: Me): AccountState => accountReducer(initialAccount, { type: "known", me });

  it("a sign-out forgets the user and renders the page afresh for the next", () => {
    const before = signedIn(ada);
    const out = accountReducer(before, { type: "signedOut" });
    expect(out).toMatchObject({ user: null, ask: "signIn", reason: null });
    expect(signedInUser(out)).toBeNull();
    const next = accountReducer(out, { type: "signedIn", me: bob });
    expect(pageKey(next)).not.toBe(pageKey(before));
    expect(signedInUser(next)?.name).toBe("bob");
  });

  it("a sign-in that ends mid-session keeps the page under the form, for the same user only", () => {
    const before = signedIn(ada);
    const ended = accountReducer(before, { type: "unauthorized", mode: "accounts" });
    expect(ended).toMatchObject({ ask: "signIn", reason: SIGN_IN_ENDED, user: ada });
    expect(pageKey(ended)).toBe(pageKey(before));
    const again = accountReducer(ended, { type: "signedIn", me: ada });
    expect(again).toMatchObject({ ask: null, reason: null, signIns: before.signIns + 1 });
    expect(pageKey(again)).toBe(pageKey(before));
    expect(pageKey(accountReducer(ended, { type: "signedIn", me: bob }))).not.toBe(pageKey(before));
  });

  it("asks for the shared token in token mode and shows no user outside accounts", () => {
    const start = accountReducer(initialAccount, { type: "unauthorized", mode: "token" });
    expect(start).toMatchObject({ checking: false, ask: "token", reason: null });
    const local = signedIn({ name: "local", isAdmin: true, auth: "none", hasPassword: false });
    expect(signedInUser(local)).toBeNull();
    expect(accountReducer(initialAccount, { type: "unreachable" })).toMatchObject({ checking: false, ask: null, user: null });
  });
});

describe("the sign-in form", () => {
  it("says what the server said, and 'try again later' at the limit", () => {
    expect(signInError(new ApiError("wrong user name or password", 401))).toBe("Wrong user name or password.");
    expect(signInError(new ApiError("too many failed sign-ins; try again later", 429))).toBe("Too many failed sign-ins. Try again later.");
    expect(signInError(new TypeError("Failed to fetch"))).toBe("Could not reach the server. Try again in a moment.");
  });

  it("shows the refusal, empties the password, and signs in with what was typed", async () => {
    const signIn = vi.fn(async (name: string, password: string): Promise<Me> => {
      if (password !== "right password") throw new ApiError("too many failed sign-ins; try again later", 429);
      return { ...ada, name };
    });
    const signedIn = vi.fn();
    act(() => render(<SignIn over={false} reason={null} onSignedIn={signedIn} signIn={signIn} />, root));
    type(root.querySelector("#signin-user"), "ada");
    type(root.querySelector("#signin-password"), "wrong");
    await act(async () => root.querySelector("form")!.requestSubmit());
    await vi.waitFor(() => expect(root.querySelector("[role=alert]")?.textContent).toBe("Too many failed sign-ins. Try again later."));
    expect(root.querySelector<HTMLInputElement>("#signin-password")!.value).toBe("");
    expect(document.activeElement).toBe(root.querySelector("#signin-password"));
    type(root.querySelector("#signin-password"), "right password");
    await act(async () => root.querySelector("form")!.requestSubmit());
    await vi.waitFor(() => expect(signedIn).toHaveBeenCalledWith({ ...ada, name: "ada" }));
    expect(signIn).toHaveBeenLastCalledWith("ada", "right password");
  });

  it("offers the server's single sign-on above the password form, and only when it has one", async () => {
    const loadSso = vi.fn(async () => ({ name: "Example ID", loginUrl: "/api/auth/oidc/login" }));
    act(() => render(<SignIn over={false} reason={null} onSignedIn={() => undefined} loadSso={loadSso} />, root));
    await vi.waitFor(() => expect(root.querySelector<HTMLAnchorElement>("a.signin-sso")?.textContent).toBe("Sign in with Example ID"));
    expect(root.querySelector<HTMLAnchorElement>("a.signin-sso")!.getAttribute("href")).toBe("/api/auth/oidc/login");
    act(() => render(null, root));
    const none = vi.fn(async () => null);
    act(() => render(<SignIn over={false} reason={null} onSignedIn={() => undefined} loadSso={none} />, root));
    await vi.waitFor(() => expect(none).toHaveBeenCalled());
    expect(root.querySelector("a.signin-sso")).toBeNull();
    expect(root.querySelector("#signin-password")).not.toBeNull();
  });

  it("says why a single sign-on was refused, from a fixed list of reasons only", () => {
    expect(ssoRefusal("#/signin?sso_error=domain_not_allowed")).toBe("Accounts with your e-mail domain may not sign in to this server.");
    expect(ssoRefusal("#/signin?sso_error=disabled")).toBe("This account is disabled. Ask an administrator.");
    for (const code of ["constructor", "__proto__", "%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E", ""])
      expect(ssoRefusal(`#/signin?sso_error=${code}`)).toBe(SSO_REFUSED);
    expect(ssoRefusal("#/signin?other=1")).toBeNull();
    expect(ssoRefusal("#/s/s_1")).toBeNull();
    expect(ssoRefusal("")).toBeNull();
  });

  it("shows a refused single sign-on above the form, once", async () => {
    window.location.hash = "#/signin?sso_error=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E";
    act(() => render(<SignIn over={false} reason={null} onSignedIn={() => undefined} loadSso={async () => null} />, root));
    expect(root.querySelector("[role=alert]")?.textContent).toBe(SSO_REFUSED);
    expect(root.querySelector("img")).toBeNull();
    expect(window.location.hash).toBe("#/");
    act(() => render(null, root));
    window.location.hash = "#/signin?sso_error=provider_unavailable";
    act(() => render(<SignIn over={false} reason={null} onSignedIn={() => undefined} loadSso={async () => null} />, root));
    expect(root.querySelector("[role=alert]")?.textContent).toBe("The sign-in provider cannot be reached just now. Try again later.");
  });

  it("over a page whose sign-in ended: a modal dialog with the name filled in and the password focused", () => {
    act(() => render(<SignIn over reason={SIGN_IN_ENDED} name="ada" onSignedIn={() => undefined} />, root));
    const dialog = root.querySelector("[role=dialog]")!;
    expect(dialog.getAttribute("aria-modal")).toBe("true");
    expect(dialog.textContent).toContain(SIGN_IN_ENDED);
    expect(root.querySelector<HTMLInputElement>("#signin-user")!.value).toBe("ada");
    expect(document.activeElement).toBe(root.querySelector("#signin-password"));
  });
});

describe("the API keys page", () => {
  const stored: ApiKey = { id: "k_1", name: "laptop", createdAt: "2026-01-02T03:04:05+00:00", expiresAt: null, lastUsedAt: null };

  function keysApi(initial: ApiKey[]): KeysApi & { keys: ApiKey[] } {
    const api = {
      keys: [...initial],
      list: vi.fn(async () => [...api.keys]),
      create: vi.fn(async (name: string, days: number | null): Promise<NewApiKey> => {
        const made = {
          id: `k_${api.keys.length + 1}`,
          name,
          createdAt: "2026-01-05T00:00:00+00:00",
          expiresAt: days ? "2026-02-04T00:00:00+00:00" : null,
          lastUsedAt: null,
        };
        api.keys.push(made);
        return { ...made, key: "sk_sleuth_secret" };
      }),
      remove: vi.fn(async (id: string) => {
        api.keys = api.keys.filter((k) => k.id !== id);
      }),
      copy: vi.fn(async () => undefined),
    };
    return api;
  }

  it("shows a new key once, with a warning and a copy button, until Done", async () => {
    const api = keysApi([stored]);
    act(() => render(<ApiKeys keys={api} />, root));
    await vi.waitFor(() => expect(root.querySelectorAll("tbody tr")).toHaveLength(1));
    type(root.querySelector("form[aria-label='New API key'] input"), "ci runner");
    act(() => {
      const select = root.querySelector<HTMLSelectElement>("form[aria-label='New API key'] select")!;
      select.value = "never";
      select.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await act(async () => root.querySelector<HTMLFormElement>("form[aria-label='New API key']")!.requestSubmit());
    await vi.waitFor(() => expect(root.querySelectorAll("tbody tr")).toHaveLength(2));
    expect(api.create).toHaveBeenCalledWith("ci runner", null);
    const shown = root.querySelector<HTMLInputElement>("input[aria-label='The new API key']")!;
    expect(shown.value).toBe("sk_sleuth_secret");
    expect(shown.readOnly).toBe(true);
    expect(root.querySelector(".new-key")?.textContent).toContain("shown only this once");
    press(byText(".new-key button", "Copy"));
    await vi.waitFor(() => expect(root.querySelector(".new-key [role=status]")?.textContent).toBe("Copied to the clipboard."));
    expect(api.copy).toHaveBeenCalledWith("sk_sleuth_secret");
    press(byText(".new-key button", "Done"));
    expect(root.innerHTML).not.toContain("sk_sleuth_secret");
    expect(root.querySelector("tbody")?.textContent).toContain("Never used");
  });

  it("deletes a key only after a confirmation that Escape or Keep leave", async () => {
    const api = keysApi([stored]);
    act(() => render(<ApiKeys keys={api} />, root));
    await vi.waitFor(() => expect(root.querySelectorAll("tbody tr")).toHaveLength(1));
    const ask = () => root.querySelector<HTMLButtonElement>("button[aria-label='Delete the key laptop']");
    press(ask());
    const group = root.querySelector("[role=group][aria-label='Delete the key laptop?']")!;
    expect(document.activeElement?.textContent).toBe("Keep");
    act(() => {
      group.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    });
    expect(root.querySelector("[role=group]")).toBeNull();
    expect(document.activeElement).toBe(ask());
    expect(api.remove).not.toHaveBeenCalled();
    press(ask());
    press(byText("[role=group] button", "Delete"));
    await vi.waitFor(() => expect(root.textContent).toContain("No API keys yet."));
    expect(api.remove).toHaveBeenCalledWith("k_1");
  });

  it("says when a key expires, and that one has", () => {
    const now = Date.parse("2026-03-01T00:00:00Z");
    expect(expiryText(stored, now)).toBe("Never");
    expect(expiryText({ ...stored, expiresAt: "2026-02-01T00:00:00+00:00" }, now)).toMatch(/^Expired /);
    expect(expiryText({ ...stored, expiresAt: "2026-04-01T00:00:00+00:00" }, now)).not.toMatch(/Expired/);
  });
});

describe("the password form", () => {
  it("says what the server refused, in a sentence", () => {
    expect(passwordChangeError(new ApiError(WRONG_CURRENT_PASSWORD, 401, WRONG_CURRENT_PASSWORD))).toBe("The current password is wrong.");
    const weak = "a password needs at least 8 characters";
    expect(passwordChangeError(new ApiError(weak, 422, weak))).toBe("A password needs at least 8 characters.");
    expect(passwordChangeError(new TypeError("Failed to fetch"))).toBe("Could not reach the server. Try again in a moment.");
  });

  it("sends the current and new password with the CSRF token; only an ended sign-in asks for a new one", async () => {
    setCookie("c5rf");
    const asked = vi.fn();
    const stop = onUnauthorized(asked);
    const answers = [
      new Response(null, { status: 204 }),
      jsonResponse({ detail: WRONG_CURRENT_PASSWORD }, 401),
      jsonResponse({ detail: "your sign-in has ended; sign in again" }, 401),
    ];
    const fetchMock = vi.fn(async (_url: string, _init?: RequestInit) => answers.shift()!);
    vi.stubGlobal("fetch", fetchMock);
    try {
      await changePassword("old one", "new password");
      const [url, init] = fetchMock.mock.calls[0];
      expect(url).toBe("/api/auth/password");
      expect(JSON.parse(init?.body as string)).toEqual({ current_password: "old one", new_password: "new password" });
      expect((init?.headers as Record<string, string>)["X-CSRF-Token"]).toBe("c5rf");
      await expect(changePassword("wrong", "new password")).rejects.toMatchObject({ status: 401 });
      expect(asked).not.toHaveBeenCalled(); // the form says so; the sign-in is fine
      await expect(changePassword("old one", "new password")).rejects.toMatchObject({ status: 401 });
      expect(asked).toHaveBeenCalledTimes(1);
    } finally {
      stop();
    }
  });

  it("waits for the new password twice alike, shows a refusal, and says when it is changed", async () => {
    const change = vi.fn(async (current: string, _next: string) => {
      if (current !== "old password") throw new ApiError(WRONG_CURRENT_PASSWORD, 401, WRONG_CURRENT_PASSWORD);
    });
    act(() => render(<PasswordChange change={change} />, root));
    const submit = () => root.querySelector<HTMLButtonElement>("form button[type=submit]")!;
    type(root.querySelector("#password-current"), "not it");
    type(root.querySelector("#password-new"), "a new password");
    type(root.querySelector("#password-again"), "a new passwort");
    expect(root.textContent).toContain("The two new passwords differ.");
    expect(submit().disabled).toBe(true);
    type(root.querySelector("#password-again"), "a new password");
    expect(submit().disabled).toBe(false);
    await act(async () => root.querySelector("form")!.requestSubmit());
    await vi.waitFor(() => expect(root.querySelector("[role=alert]")?.textContent).toBe("The current password is wrong."));
    type(root.querySelector("#password-current"), "old password");
    await act(async () => root.querySelector("form")!.requestSubmit());
    await vi.waitFor(() => expect(root.querySelector("[role=status]")?.textContent).toBe(PASSWORD_CHANGED));
    expect(change).toHaveBeenLastCalledWith("old password", "a new password");
    expect(root.querySelector("[role=alert]")).toBeNull();
    for (const id of ["#password-current", "#password-new", "#password-again"])
      expect(root.querySelector<HTMLInputElement>(id)!.value).toBe("");
  });
});

describe("signing out", () => {
  /** The server as the page sees it: `me` signed in, each user's sessions; bob's list never answers. */
  function server(state: { me: Me | null }) {
    const calls: { url: string; method: string; headers: Record<string, string> }[] = [];
    const fetchMock = vi.fn(async (input: string, init?: RequestInit) => {
      const method = init?.method ?? "GET";
      calls.push({ url: input, method, headers: (init?.headers ?? {}) as Record<string, string> });
      const path = input.split("?")[0];
      if (path === "/api/auth/me")
        return state.me
          ? jsonResponse({ name: state.me.name, is_admin: false, auth: "accounts", has_password: state.me.hasPassword })
          : jsonResponse({ detail: "sign in" }, 401);
      if (path === "/api/health")
        return jsonResponse({
          status: "ok",
          ready: true,
          version: "t",
          active_runs: 0,
          max_runs: 1,
          engines: 1,
          engines_ready: 1,
          auth: "accounts",
        });
      if (path === "/api/auth/logout") {
        state.me = null;
        return new Response(null, { status: 204 });
      }
      if (path === "/api/auth/login") {
        const { username } = JSON.parse(init?.body as string) as { username: string };
        state.me = username === "bob" ? bob : ada;
        setCookie(`csrf-of-${username}`);
        return jsonResponse({ name: username, is_admin: false, auth: "accounts", csrf_token: `csrf-of-${username}` });
      }
      if (!state.me) return jsonResponse({ detail: "your sign-in has ended; sign in again" }, 401);
      if (path === "/api/sessions" && state.me.name === "ada")
        return jsonResponse([{ id: "s_ada", title: "Ada's private topic", created_at: "2026-01-01T00:00:00", updated_at: null }]);
      if (path === "/api/sessions") return new Promise<Response>(() => undefined);
      if (path === "/api/sources" || path === "/api/keys") return jsonResponse([]);
      return jsonResponse({ detail: "not found" }, 404);
    });
    vi.stubGlobal("fetch", fetchMock);
    return calls;
  }

  it("ends the sign-in on the server and leaves nothing of the user's for the next one", async () => {
    const state = { me: ada as Me | null };
    const calls = server(state);
    setCookie("csrf-of-ada");
    localStorage.setItem("sleuth.sources.s_ada", JSON.stringify(["ada-uploads"]));
    localStorage.setItem("sleuth.sources.last", JSON.stringify(["ada-uploads"]));
    window.location.hash = "#/s/s_ada";
    act(() => render(<Root />, root));
    await vi.waitFor(() => expect(root.textContent).toContain("Ada's private topic"));
    expect(root.querySelector(".topbar-user")?.textContent).toContain("ada");
    expect(byText("button", "Add files…")).not.toBeNull(); // every user uploads into collections of their own

    press(byText(".topbar-account button", "Sign out"));
    await vi.waitFor(() => expect(root.querySelector("#signin-title")).not.toBeNull());
    const logout = calls.find((c) => c.url === "/api/auth/logout")!;
    expect(logout.method).toBe("POST");
    expect(logout.headers["X-CSRF-Token"]).toBe("csrf-of-ada");
    expect(root.textContent).not.toContain("Ada's private topic");
    expect(root.querySelector(".app")).toBeNull();
    expect(window.location.hash).toBe("#/");
    expect(localStorage.getItem("sleuth.sources.s_ada")).toBeNull();
    expect(localStorage.getItem("sleuth.sources.last")).toBeNull();

    // bob signs in; his history has not answered yet, and nothing of ada's shows meanwhile.
    type(root.querySelector("#signin-user"), "bob");
    type(root.querySelector("#signin-password"), "bob's password");
    await act(async () => root.querySelector("form")!.requestSubmit());
    await vi.waitFor(() => expect(root.querySelector(".topbar-user")?.textContent).toContain("bob"));
    expect(root.textContent).not.toContain("Ada's private topic");
    expect(root.querySelectorAll(".session-item")).toHaveLength(0);
  });

  it("offers a password change on the API keys page only to a user who has a password", async () => {
    for (const me of [ada, bob]) {
      server({ me });
      window.location.hash = "#/keys";
      act(() => render(<Root />, root));
      await vi.waitFor(() => expect(root.querySelector("#keys-title")).not.toBeNull());
      await vi.waitFor(() => expect(root.textContent).toContain("No API keys yet."));
      expect(root.querySelector("#password-current") !== null).toBe(me.hasPassword);
      act(() => render(null, root));
    }
  });

  it("a 401 mid-session covers the page with the sign-in form and keeps the page under it", async () => {
    const state = { me: ada as Me | null };
    server(state);
    act(() => render(<Root />, root));
    await vi.waitFor(() => expect(root.textContent).toContain("Ada's private topic"));
    const page = root.querySelector(".app");
    state.me = null; // signed out elsewhere
    type(root.querySelector(".session-search"), "topic");
    await vi.waitFor(() => expect(root.querySelector("[role=dialog]")).not.toBeNull());
    expect(root.querySelector(".app")).toBe(page);
    expect(page?.hasAttribute("inert")).toBe(true);
    expect(root.querySelector<HTMLInputElement>(".session-search")!.value).toBe("topic");

    type(root.querySelector("#signin-password"), "ada's password");
    await act(async () => root.querySelector<HTMLFormElement>("form[role=dialog]")!.requestSubmit());
    await vi.waitFor(() => expect(root.querySelector("[role=dialog]")).toBeNull());
    expect(root.querySelector(".app")).toBe(page);
    expect(page?.hasAttribute("inert")).toBe(false);
    expect(root.querySelector<HTMLInputElement>(".session-search")!.value).toBe("topic");
  });
});
