"""HTML to clean text: pick the main content, drop boilerplate, keep headings, paragraphs and lists."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup
from bs4.element import Comment, NavigableString, PreformattedString, Tag

# Never content: code, chrome, and interactive widgets.
DROP_TAGS = (
    "head",
    "title",
    "meta",
    "link",
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "button",
    "input",
    "select",
    "textarea",
    "dialog",
)
DROP_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "dialog", "menu"}
# Class/id words that mark page chrome on sites that do not use semantic tags.
BOILERPLATE_WORDS = {
    "cookie",
    "cookies",
    "consent",
    "sidebar",
    "breadcrumb",
    "breadcrumbs",
    "share",
    "sharing",
    "social",
    "advert",
    "advertisement",
    "ads",
    "newsletter",
    "popup",
    "modal",
    "skip-link",
    "related",
    "menu",
    "navbar",
    "site-header",
    "site-footer",
}
BLOCK_TAGS = {
    "address",
    "article",
    "blockquote",
    "body",
    "caption",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "hr",
    "li",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "thead",
    "tfoot",
    "tr",
    "ul",
}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_WORDS = re.compile(r"[\s_]+")


def html_to_text(markup: str | bytes, charset: str | None = None) -> tuple[str, str]:
    """Return (title, text) for an HTML document."""
    soup = BeautifulSoup(markup, "html.parser", from_encoding=charset if isinstance(markup, bytes) else None)
    title = _title(soup)
    _strip_boilerplate(soup)
    root = _main_content(soup)
    return title, _render(root)


def _title(soup: BeautifulSoup) -> str:
    og = soup.find("meta", attrs={"property": "og:title"})
    if isinstance(og, Tag) and str(og.get("content") or "").strip():
        return _clean(str(og.get("content")))
    if soup.title and soup.title.string:
        return _clean(soup.title.string)
    h1 = soup.find("h1")
    return _clean(h1.get_text(" ")) if isinstance(h1, Tag) else ""


def _strip_boilerplate(soup: BeautifulSoup) -> None:
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    for tag in soup.find_all(DROP_TAGS):
        tag.decompose()
    for tag in soup.find_all(True):
        if tag.decomposed or tag.name in ("html", "body", "main", "article"):
            continue
        if _is_hidden(tag) or _looks_like_chrome(tag):
            tag.decompose()


def _is_hidden(tag: Tag) -> bool:
    if tag.attrs is None:
        return False
    style = str(tag.get("style") or "").replace(" ", "").lower()
    return (
        tag.has_attr("hidden")
        or str(tag.get("aria-hidden") or "").lower() == "true"
        or "display:none" in style
        or str(tag.get("role") or "").lower() in DROP_ROLES
    )


def _looks_like_chrome(tag: Tag) -> bool:
    if tag.attrs is None:
        return False
    classes: object = tag.get("class") or []
    names = [*(classes if isinstance(classes, list) else [classes]), str(tag.get("id") or "")]
    # Whole tokens only: "related" marks chrome, but "unrelated-work" must not.
    words = {w for name in names for w in [name.lower(), *_WORDS.split(name.lower())] if w}
    return bool(words & BOILERPLATE_WORDS)


def _main_content(soup: BeautifulSoup) -> Tag:
    """The densest <main>/<article>/[role=main] element, or <body> when there is none worth using."""
    body = soup.body or soup
    candidates = [t for t in soup.find_all(["main", "article"]) if isinstance(t, Tag)]
    candidates += [t for t in soup.find_all(True, attrs={"role": "main"}) if isinstance(t, Tag)]
    if not candidates:
        return body
    best = max(candidates, key=lambda t: len(t.get_text(" ", strip=True)))
    # A tiny <article> teaser on a long page is not the main content.
    if (
        len(best.get_text(" ", strip=True)) * 5 < len(body.get_text(" ", strip=True))
        and len(best.get_text(strip=True)) < 200
    ):
        return body
    return best


def _render(root: Tag) -> str:
    blocks: list[str] = []
    inline: list[str] = []

    def flush() -> None:
        text = _clean("".join(inline))
        inline.clear()
        if text:
            blocks.append(text)

    def walk(node: Tag) -> None:
        for child in node.children:
            if isinstance(child, PreformattedString):
                continue  # doctype, comments, CDATA, processing instructions: not text
            if isinstance(child, NavigableString):
                inline.append(str(child).replace("\n", " "))  # source newlines are just spaces
            elif isinstance(child, Tag):
                name = child.name
                if name in HEADINGS:
                    flush()
                    heading = _clean(child.get_text(" "))
                    if heading:
                        blocks.append("#" * HEADINGS[name] + " " + heading)
                elif name == "pre":
                    flush()
                    code = child.get_text().strip("\n")
                    if code.strip():
                        blocks.append(code)
                elif name == "br":
                    inline.append("\n")
                elif name in ("td", "th"):
                    inline.append(" ")
                    walk(child)
                    inline.append(" |")
                elif name in BLOCK_TAGS:
                    flush()
                    if name in ("li", "dt"):
                        inline.append("- ")
                    walk(child)
                    flush()
                else:
                    walk(child)

    walk(root)
    flush()
    return "\n\n".join(blocks)


def _clean(text: str) -> str:
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    joined = "\n".join(line for line in lines if line)
    return joined if joined not in ("-", "|") else ""
