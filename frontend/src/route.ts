// Where the URL's hash points: a session (and maybe one of its runs), the schedules page, one
// schedule's history, or the API keys page. Pure, so the parsing is tested without a browser.

export type Route =
  | { page: "session"; sessionId: string | null; runId: string | null }
  | { page: "schedules" }
  | { page: "schedule"; scheduleId: string }
  | { page: "keys" };

const decode = (part: string): string | null => {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
};

export function parseRoute(hash: string): Route {
  if (hash === "#/keys") return { page: "keys" };
  const schedule = /^#\/schedules\/([^/?#]+)/.exec(hash);
  const scheduleId = schedule ? decode(schedule[1]) : null;
  if (scheduleId) return { page: "schedule", scheduleId };
  if (/^#\/schedules\/?$/.test(hash)) return { page: "schedules" };
  const session = /^#\/s\/([^/?#]+)(?:\/r\/([^/?#]+))?/.exec(hash);
  return { page: "session", sessionId: session ? decode(session[1]) : null, runId: session?.[2] ? decode(session[2]) : null };
}

/** What the top bar and the browser's tab call a page (a session: its own title, when it has one). */
export function pageTitle(route: Route, sessionTitle: string | null | undefined): string {
  if (route.page === "keys") return "API keys";
  if (route.page !== "session") return "Schedules";
  return sessionTitle || "";
}

export const schedulesHash = (): string => "#/schedules";
export const scheduleHash = (id: string): string => `#/schedules/${encodeURIComponent(id)}`;
/** A run in its session: the session opens with that run in view. */
export const runHash = (sessionId: string, runId: string): string => `#/s/${encodeURIComponent(sessionId)}/r/${encodeURIComponent(runId)}`;
