// The optional API token (SLEUTH_API_TOKEN on the server). Kept in localStorage so a reload
// or a new tab keeps working; sent as a bearer header by every request the UI makes.

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

export function authHeaders(): Record<string, string> {
  const token = getToken();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** Subscribe to "the server wants a (different) token"; returns the unsubscribe function. */
export function onUnauthorized(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function reportUnauthorized(): void {
  for (const listener of listeners) listener();
}
