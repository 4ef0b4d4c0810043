import type { SourceInfo } from "./api";

/** What the source picker says beside a source's name; `problem` is set for an MCP server runs cannot use. */
export function sourceDetail(s: SourceInfo): { text: string; problem: string | null } {
  if (s.kind === "web") return { text: "web search", problem: null };
  if (s.kind === "local") return { text: `${s.documents ?? 0} document${s.documents === 1 ? "" : "s"}`, problem: null };
  if (s.state === "unavailable") return { text: "MCP: unavailable", problem: s.reason || "the server did not start" };
  if (s.state === "ready") return { text: `MCP: ${s.tools ?? 0} tool${s.tools === 1 ? "" : "s"}`, problem: null };
  return { text: s.state === "starting" ? "MCP: starting…" : "MCP tools", problem: null };
}

/** The badge beside a local collection's name: only an upload that is not everyone's has one. */
export function accessBadge(s: SourceInfo): { text: string; title: string } | null {
  if (s.visibility === "private") return { text: "private", title: "Your upload: only you see it" };
  if (s.visibility === "shared") {
    return s.editable
      ? { text: "shared", title: "Your upload, shared with every user (read-only to them)" }
      : { text: "shared", title: "Another user's upload, shared with you read-only" };
  }
  return null;
}
