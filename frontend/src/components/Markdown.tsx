import { useLayoutEffect, useRef } from "preact/hooks";
import { renderMarkdown, type CitationLookup } from "../markdown";

interface Props {
  markdown: string;
  /** Resolves a citation number to its source; omitted = no chips. */
  cite?: CitationLookup;
  class?: string;
}

/**
 * Sanitised markdown. The fragment from DOMPurify is attached with DOM calls instead of
 * innerHTML, so the sanitised tree is never re-parsed from a string.
 */
export function Markdown({ markdown, cite, class: cls }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    ref.current?.replaceChildren(renderMarkdown(markdown, cite));
  }, [markdown, cite]);
  return <div ref={ref} class={`md ${cls ?? ""}`} />;
}
