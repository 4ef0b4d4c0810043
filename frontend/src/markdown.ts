// Model and web text -> safe DOM. marked turns markdown into HTML; DOMPurify sanitises it
// into a DocumentFragment (never re-parsed from a string); only then are citation chips
// built, with DOM calls on text nodes, so nothing unsanitised ever reaches the page.

import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";
import { safeHref } from "./urls";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]);
}

/**
 * A report's image is shown as a text link to its URL (the link policy below drops any href that is
 * not http(s)), never as <img>: loading it would fetch whatever URL a model or a quoted page wrote.
 */
const marked = new Marked({
  async: false,
  gfm: true,
  breaks: false,
  renderer: {
    image({ href, text }: Tokens.Image): string {
      return `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`;
    },
  },
});

const FORBID_TAGS = ["style", "img", "svg", "math", "form", "input", "button", "textarea", "select", "iframe", "object", "embed", "video", "audio", "picture", "source", "link", "meta", "base"];

let purifier: ReturnType<typeof DOMPurify> | null = null;

/** One DOMPurify instance for this window, with the link policy hook installed once. */
function getPurifier(): ReturnType<typeof DOMPurify> {
  if (purifier) return purifier;
  const p = DOMPurify(window);
  p.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName !== "A") return;
    const el = node as Element;
    // Only http(s) links survive, and they open outside the app without a referrer.
    const href = safeHref(el.getAttribute("href"));
    if (href) {
      el.setAttribute("href", href);
      el.setAttribute("target", "_blank");
      el.setAttribute("rel", "noopener noreferrer");
    } else {
      el.removeAttribute("href");
      el.removeAttribute("target");
    }
  });
  purifier = p;
  return p;
}

/** Markdown -> sanitised fragment (no chips); `inline` keeps it to a line's content (code, emphasis, links), no blocks. */
export function sanitizeMarkdown(md: string, doc: Document = document, inline = false): DocumentFragment {
  const html = inline ? marked.parseInline(md ?? "", { async: false }) : marked.parse(md ?? "", { async: false });
  const frag = getPurifier().sanitize(html, {
    RETURN_DOM_FRAGMENT: true,
    FORBID_TAGS,
    FORBID_ATTR: ["style", "class", "id", "srcset", "formaction"],
    ALLOW_DATA_ATTR: false,
  }) as DocumentFragment;
  return doc === document ? frag : (doc.importNode(frag, true) as DocumentFragment);
}

export interface CitationTarget {
  number: number;
  title: string;
  /** Why the cited source may not support this sentence; marks the chip. */
  unsupported?: string;
}

/** `[3]`, `[1, 2]` and `[1][2]` all cite. */
const CITE_RE = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g;
const HAS_CITE = /\[\d{1,3}(?:\s*,\s*\d{1,3})*\]/;
const SKIP = new Set(["CODE", "PRE", "A", "BUTTON"]);

/** Resolves a citation number, and which appearance of that number in the text this is (from 1). */
export type CitationLookup = (n: number, occurrence: number) => CitationTarget | null;

/**
 * Replace citation markers in text nodes with chip buttons. Only numbers `lookup` knows get
 * a chip; the rest stay as text. Chips carry `data-cite` for event delegation.
 */
export function addCitationChips(root: ParentNode, lookup: CitationLookup): void {
  const doc = (root as Node).ownerDocument ?? document;
  const walker = doc.createTreeWalker(root as Node, NodeFilter.SHOW_TEXT, {
    acceptNode(node) {
      for (let p = node.parentNode; p && p !== root; p = p.parentNode) {
        if (SKIP.has(p.nodeName)) return NodeFilter.FILTER_REJECT;
      }
      return HAS_CITE.test(node.nodeValue ?? "") ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP;
    },
  });
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n as Text);
  const seen = new Map<number, number>();
  for (const text of texts) {
    const value = text.nodeValue ?? "";
    const parts: Node[] = [];
    let last = 0;
    CITE_RE.lastIndex = 0;
    for (let m = CITE_RE.exec(value); m; m = CITE_RE.exec(value)) {
      const nums = m[1].split(",").map((x) => parseInt(x.trim(), 10));
      const targets = nums.map((n) => lookup(n, (seen.get(n) ?? 0) + 1));
      if (targets.some((t) => !t)) continue;
      for (const n of nums) seen.set(n, (seen.get(n) ?? 0) + 1);
      if (m.index > last) parts.push(doc.createTextNode(value.slice(last, m.index)));
      for (const t of targets as CitationTarget[]) parts.push(makeChip(doc, t));
      last = m.index + m[0].length;
    }
    if (!parts.length) continue;
    if (last < value.length) parts.push(doc.createTextNode(value.slice(last)));
    const frag = doc.createDocumentFragment();
    frag.append(...parts);
    text.replaceWith(frag);
  }
}

function makeChip(doc: Document, t: CitationTarget): HTMLElement {
  const b = doc.createElement("button");
  b.type = "button";
  b.className = "cite-chip";
  b.dataset.cite = String(t.number);
  // Attribute and text values set through the DOM are never parsed as HTML.
  b.setAttribute("aria-label", `Source ${t.number}${t.title ? `: ${t.title}` : ""}`);
  b.textContent = String(t.number);
  if (t.unsupported) {
    b.classList.add("unsupported");
    b.dataset.unsupported = t.unsupported;
    b.title = `The source may not support this sentence: ${t.unsupported}`;
    b.setAttribute("aria-label", `${b.getAttribute("aria-label")} (may not support this sentence: ${t.unsupported})`);
  }
  return b;
}

/** Markdown -> safe fragment with citation chips. */
export function renderMarkdown(md: string, lookup?: CitationLookup, inline = false): DocumentFragment {
  const frag = sanitizeMarkdown(md, document, inline);
  if (lookup) addCitationChips(frag, lookup);
  return frag;
}
