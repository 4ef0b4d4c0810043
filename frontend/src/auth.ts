// How every request the UI makes says who it is from. With SLEUTH_AUTH=token, the shared token
// (SLEUTH_API_TOKEN), kept in localStorage so a reload or a new tab keeps working and sent as a
// bearer header. With accounts, the browser sends the HttpOnly sign-in cookie by itself; a request
// that changes something echoes the readable `sleuth_csrf` cookie as X-CSRF-Token (double submit).

const KEY = "sleuth.apiToken";
const listeners = new Set<() => void>();

export function getToken(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null; // storage disabled: the user is asked again
  }
}

export function setToken(token: string | null): void {
  try {
    if (token) localStorage.setItem(KEY, token);
    else localStorage.removeItem(KEY);
  } catch {
    /* storage disabled */
  }
}

export const CSRF_COOKIE = "sleuth_csrf";
export const CSRF_HEADER = "X-CSRF-Token";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The `sleuth_csrf` cookie's value in a `document.cookie` string; null without a sign-in. */
export function csrfFromCookies(cookies: string): string | null {
  for (const part of cookies.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name !== CSRF_COOKIE || !value.length) continue;
    try {
      return decodeURIComponent(value.join("=")) || null;
    } catch {
      return value.join("=") || null; // not percent-encoded after all
    }
  }
  return null;
}

function documentCookies(): string {
  return typeof document === "undefined" ? "" : document.cookie;
}

/**
 * The headers that authenticate a request with `method`: the bearer token when one is stored;
 * else, for a change (not GET, HEAD or OPTIONS) by a cookie sign-in, its CSRF token. A bearer
 * request needs none: a browser never adds that header by itself.
 */
export function authHeaders(method = "GET", cookies: string = documentCookies()): Record<string, string> {
  const token = getToken();
  if (token) return { Authorization: `Bearer ${token}` };
  if (SAFE_METHODS.has(method.toUpperCase())) return {};
  const csrf = csrfFromCookies(cookies);
  return csrf ? { [CSRF_HEADER]: csrf } : {};
}

/** Subscribe to "the server wants a sign-in or a (different) token"; returns the unsubscribe function. */
export function onUnauthorized(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function reportUnauthorized(): void {
  for (const listener of listeners) listener();
}
