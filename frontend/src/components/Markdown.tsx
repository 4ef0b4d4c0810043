import { useLayoutEffect, useRef } from "preact/hooks";
import { renderMarkdown, type CitationLookup } from "../markdown";

interface Props {
  markdown: string;
  /** Resolves a citation number to its source; omitted = no chips. */
  cite?: CitationLookup;
  class?: string;
  /** A line of text (a summary, a finding): inline markup only, in a span. */
  inline?: boolean;
}

/**
 * Sanitised markdown. The fragment from DOMPurify is attached with DOM calls instead of
 * innerHTML, so the sanitised tree is never re-parsed from a string.
 */
export function Markdown({ markdown, cite, class: cls, inline = false }: Props) {
  const ref = useRef<HTMLDivElement & HTMLSpanElement>(null);
  useLayoutEffect(() => {
    ref.current?.replaceChildren(renderMarkdown(markdown, cite, inline));
  }, [markdown, cite, inline]);
  return inline ? <span ref={ref} class={`md ${cls ?? ""}`} /> : <div ref={ref} class={`md ${cls ?? ""}`} />;
}
