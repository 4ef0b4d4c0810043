import type { Document } from "../types";
import { describeUrl } from "../urls";
import { Icon } from "./Icon";

/** A source's title and domain; only http(s) sources link out (new tab, no referrer). */
export function SourceTitle({ doc }: { doc: Pick<Document, "url" | "title"> }) {
  const u = describeUrl(doc.url);
  const title = doc.title || doc.url || "Untitled";
  return (
    <span class="src-title">
      {u.href ? (
        <a href={u.href} target="_blank" rel="noopener noreferrer">
          {title}
        </a>
      ) : (
        <span>{title}</span>
      )}
      <span class={`src-domain ${u.local || u.tool ? "local" : ""}`}>
        {u.local ? <Icon name="book" /> : u.tool ? <Icon name="plug" /> : null}
        {u.local || u.tool ? " " : ""}
        {u.domain}
        {u.local ? <span class="sr-only"> (local corpus)</span> : null}
        {u.tool ? <span class="sr-only"> (MCP server)</span> : null}
      </span>
    </span>
  );
}
