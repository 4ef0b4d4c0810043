"""HTML to clean text, for web pages and local files alike.

Picks the main content, drops page chrome (navigation, headers, footers, breadcrumbs, DocBook's
Prev/Up/Next bars, Sphinx's related links and pilcrows, in-page tables of contents), and keeps
headings, paragraphs, lists, code blocks verbatim and tables as markdown rows. Pages that are only
a table of contents or an alphabetical index are recognised (`HtmlText.kind`) so an indexer can
leave them out: they match every query and say nothing. A page with a prose paragraph says
something: it is never an index, and it is a table of contents only when its links sit in a list
the page itself marks as one (an API page listing its object's methods is an ordinary page).

The tree is walked with an explicit stack, never by recursion: real pages nest thousands deep
(unclosed `<li>`s under Python's HTML parser).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from sleuth.core import heavy

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
    # DocBook (PostgreSQL, many manuals): the Prev/Up/Home/Next tables.
    "navheader",
    "navfooter",
    # Sphinx (Python docs and most Python projects): pilcrow links, sidebars, footers.
    "headerlink",
    "sphinxsidebar",
    "sphinxsidebarwrapper",
    "footer",
    "mobile-nav",
    "skip",
}
# In-page tables of contents: removed from the text, but only after they helped tell whether the
# whole page is a contents page.
CONTENTS_WORDS = {"toc", "contents", "toctree-wrapper", "local-toc"}
PageKind = Literal["page", "toc", "index"]
# Classes and ids that mark a whole page as an alphabetical index (DocBook, Sphinx genindex).
INDEX_TITLE = re.compile(r"^(general |alphabetical )?index\b", re.I)
INDEX_MARKERS = {"index", "indextable", "genindex", "genindex-jumpbox", "indexdiv"}
# A page whose main text is mostly link text, with many links, is a table of contents.
TOC_LINK_SHARE = 0.6
TOC_MIN_LINKS = 12
# A page of at least this many list entries of a few words each, which hold this share of its words,
# is an index of terms even when its entries are not links.
ENTRY_LIST_MIN_ITEMS = 50
ENTRY_MAX_WORDS = 8
ENTRY_LIST_SHARE = 0.8
# A paragraph with this many words outside its links is prose (an index entry or a contents line
# is a few words; "See also: a(), b() and c()." is mostly links).
PROSE_MIN_WORDS = 20


@dataclass(frozen=True)
class HtmlText:
    title: str
    text: str
    kind: PageKind = "page"


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
    page = html_document(markup, charset)
    return page.title, page.text


def html_document(markup: str | bytes, charset: str | None = None) -> HtmlText:
    """Title, main text and kind (ordinary page, table of contents, index) of an HTML document."""
    soup = heavy.BeautifulSoup(markup, "html.parser", from_encoding=charset if isinstance(markup, bytes) else None)
    title = _title(soup)
    h1 = soup.find("h1")
    heading = _clean(h1.get_text(" ")).rstrip("\u00b6 ") if isinstance(h1, heavy.Tag) else ""  # Sphinx pilcrow
    if heading and title != heading and title.startswith(heading):
        title = heading  # "Page — Site name": the page's own heading is its title
    is_index = _has_index_marker(soup) or bool(INDEX_TITLE.match(heading or title))
    _strip_boilerplate(soup)
    root = _main_content(soup)
    kind = _kind(root, is_index)
    _prune(root, _is_contents)
    return HtmlText(title, _render(root), kind)


def _descend(node: heavy.Tag, enter: Callable[[heavy.Tag], bool] = lambda tag: True) -> Iterator[heavy.PageElement]:
    """The elements under `node` in document order, without recursion; `enter(tag)`: go inside `tag`?"""
    stack: list[Iterator[heavy.PageElement]] = [iter(node.children)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        yield child
        if isinstance(child, heavy.Tag) and enter(child):
            stack.append(iter(child.children))


def _strings(node: heavy.Tag, enter: Callable[[heavy.Tag], bool] = lambda tag: True) -> Iterator[str]:
    for element in _descend(node, enter):
        if isinstance(element, heavy.NavigableString) and not isinstance(element, heavy.PreformattedString):
            yield str(element)


def _prune(root: heavy.Tag, drop: Callable[[heavy.Tag], bool]) -> None:
    """Remove every element under `root` that `drop` selects, never visiting what was removed.

    (bs4's `Tag.decomposed` searches the tag's subtree: checking it for every tag is quadratic.)
    """
    stack = [root]
    while stack:
        node = stack.pop()
        for child in list(node.children):
            if isinstance(child, heavy.Tag):
                if drop(child):
                    child.decompose()
                else:
                    stack.append(child)


def _has_index_marker(soup: heavy.BeautifulSoup) -> bool:
    body = soup.body or soup
    for tag in [body, *body.find_all(True, limit=40)]:
        if not isinstance(tag, heavy.Tag) or tag.attrs is None:
            continue
        classes: Any = tag.get("class") or []
        names = {*(classes if isinstance(classes, list) else [classes]), str(tag.get("id") or "")}
        if names & INDEX_MARKERS:
            return True
    return False


def _kind(root: heavy.Tag, index_marked: bool) -> PageKind:
    if not _has_prose(root):
        if index_marked:
            return "index"
        return "toc" if _is_toc(root) else "index" if _is_entry_list(root) else "page"
    # Prose: only links in a list marked as a table of contents can make this a contents page.
    return "toc" if _is_toc(root, marked_only=True) else "page"


def _has_prose(root: heavy.Tag) -> bool:
    """Whether a paragraph of the main content has PROSE_MIN_WORDS words outside its links."""
    for paragraph in _descend(root):
        if isinstance(paragraph, heavy.Tag) and paragraph.name == "p":
            # A <p> nested in this one (no closing tags) counts on its own.
            own = _strings(paragraph, lambda tag: tag.name not in ("a", "p"))
            if sum(len(text.split()) for text in own) >= PROSE_MIN_WORDS:
                return True
    return False


def _is_toc(root: heavy.Tag, *, marked_only: bool = False) -> bool:
    """Mostly link text and many links: a contents page (its own prose is a line or two at most).

    `marked_only` counts only the links inside an element the page marks as its contents (`toc`,
    `toctree-wrapper`, ...).
    """
    scopes = [root]
    if marked_only:
        outermost = _descend(root, lambda tag: not _is_contents(tag))
        scopes = [t for t in outermost if isinstance(t, heavy.Tag) and _is_contents(t)]
    links = [a for scope in scopes for a in scope.find_all("a") if isinstance(a, heavy.Tag) and a.get_text(strip=True)]
    if len(links) < TOC_MIN_LINKS:
        return False
    total = len(" ".join(root.get_text(" ").split()))
    linked = sum(len(" ".join(a.get_text(" ").split())) for a in links)
    return total > 0 and linked / total >= TOC_LINK_SHARE


def _is_entry_list(root: heavy.Tag) -> bool:
    """A long list of a few words an entry, and little else: a keyword or cross-reference index
    whose entries name their targets in plain text rather than as links."""
    items = [li for li in root.find_all("li") if isinstance(li, heavy.Tag)]
    if len(items) < ENTRY_LIST_MIN_ITEMS:
        return False
    # An entry's own words: unclosed <li>s nest each entry in the one before.
    words = [sum(len(text.split()) for text in _strings(li, lambda tag: tag.name != "li")) for li in items]
    total = len(root.get_text(" ").split())
    return sum(words) / len(words) <= ENTRY_MAX_WORDS and sum(words) >= ENTRY_LIST_SHARE * total


def _is_contents(tag: heavy.Tag) -> bool:
    return bool(_class_words(tag) & CONTENTS_WORDS)


def _title(soup: heavy.BeautifulSoup) -> str:
    og = soup.find("meta", attrs={"property": "og:title"})
    if isinstance(og, heavy.Tag) and str(og.get("content") or "").strip():
        return _clean(str(og.get("content")))
    if soup.title and soup.title.string:
        return _clean(soup.title.string)
    h1 = soup.find("h1")
    return _clean(h1.get_text(" ")) if isinstance(h1, heavy.Tag) else ""


def _strip_boilerplate(soup: heavy.BeautifulSoup) -> None:
    for comment in soup.find_all(string=lambda s: isinstance(s, heavy.Comment)):
        comment.extract()
    _prune(soup, _is_boilerplate)


def _is_boilerplate(tag: heavy.Tag) -> bool:
    if tag.name in DROP_TAGS:
        return True
    if tag.name in ("html", "body", "main", "article"):
        return False
    return _is_hidden(tag) or _looks_like_chrome(tag)


def _is_hidden(tag: heavy.Tag) -> bool:
    if tag.attrs is None:
        return False
    style = str(tag.get("style") or "").replace(" ", "").lower()
    return (
        tag.has_attr("hidden")
        or str(tag.get("aria-hidden") or "").lower() == "true"
        or "display:none" in style
        or str(tag.get("role") or "").lower() in DROP_ROLES
    )


def _class_words(tag: heavy.Tag) -> set[str]:
    if tag.attrs is None:
        return set()
    classes: Any = tag.get("class") or []
    names = [*(classes if isinstance(classes, list) else [classes]), str(tag.get("id") or "")]
    # Whole tokens only: "related" marks chrome, but "unrelated-work" must not.
    return {w for name in names for w in [name.lower(), *_WORDS.split(name.lower())] if w}


def _looks_like_chrome(tag: heavy.Tag) -> bool:
    return bool(_class_words(tag) & BOILERPLATE_WORDS)


def _main_content(soup: heavy.BeautifulSoup) -> heavy.Tag:
    """The densest <main>/<article>/[role=main] element, or <body> when there is none worth using."""
    body = soup.body or soup
    candidates = [t for t in soup.find_all(["main", "article"]) if isinstance(t, heavy.Tag)]
    candidates += [t for t in soup.find_all(True, attrs={"role": "main"}) if isinstance(t, heavy.Tag)]
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


def _render(root: heavy.Tag) -> str:
    blocks: list[str] = []
    inline: list[str] = []

    def flush() -> None:
        text = _clean("".join(inline))
        inline.clear()
        if text:
            blocks.append(text)

    # Each entry: the children still to render, and what closes the element they belong to.
    stack: list[tuple[Iterator[heavy.PageElement], Literal["", "cell", "block"]]] = [(iter(root.children), "")]
    while stack:
        children, closing = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            if closing == "cell":
                inline.append(" |")
            elif closing == "block":
                flush()
            continue
        if isinstance(child, heavy.PreformattedString):
            continue  # doctype, comments, CDATA, processing instructions: not text
        if isinstance(child, heavy.NavigableString):
            inline.append(str(child).replace("\n", " "))  # source newlines are just spaces
            continue
        if not isinstance(child, heavy.Tag):
            continue
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
        elif name == "table":
            flush()
            rows = _table_rows(child)
            if rows:
                blocks.append(rows)
        elif name in ("td", "th"):
            inline.append(" ")
            stack.append((iter(child.children), "cell"))
        elif name in BLOCK_TAGS:
            # An item's marker waits for the item's first block: `<li><p>text</p></li>` is one item.
            if "".join(inline).strip() != "-":
                flush()
            if name in ("li", "dt") and not inline:
                inline.append("- ")
            stack.append((iter(child.children), "block"))
        else:
            stack.append((iter(child.children), ""))
    flush()
    return "\n\n".join(blocks)


# Tags whose end tag HTML lets a page omit: Python's parser then nests each row (or cell) inside the
# one before, so rows, cells and cell text are gathered without going into the next row or cell.
_ROW_PARTS = ("tr", "td", "th")


def _cell(cell: heavy.Tag) -> str:
    """A cell's text on one line: newlines would break the row, pipes would split the cell.

    A table inside the cell is flattened into its text; a row or cell nested in it (end tags
    omitted) is the table's own next row or cell, rendered in its place instead.
    """
    parts: list[str] = []
    for element in _descend(cell, lambda tag: tag.name not in (*_ROW_PARTS, "table")):
        if isinstance(element, heavy.NavigableString) and not isinstance(element, heavy.PreformattedString):
            parts.append(str(element))
        elif isinstance(element, heavy.Tag) and element.name == "table":
            parts.append(element.get_text(" "))
    return " ".join(" ".join(parts).split()).replace("|", "\\|")


def _table_rows(table: heavy.Tag) -> str:
    """A table as markdown rows, a header separator after the first row; nested tables are flattened."""
    rows: list[list[str]] = []
    header = False
    caption = table.find("caption")
    own_rows = [
        t for t in _descend(table, lambda tag: tag.name != "table") if isinstance(t, heavy.Tag) and t.name == "tr"
    ]
    for tr in own_rows:
        cells = [
            c
            for c in _descend(tr, lambda tag: tag.name not in ("table", "tr"))
            if isinstance(c, heavy.Tag) and c.name in ("td", "th")
        ]
        if not cells:
            continue
        if not rows:
            header = all(c.name == "th" for c in cells) or tr.find_parent("thead") is not None
        texts = [_cell(c) for c in cells]
        if any(texts):
            rows.append(texts)
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    if header and len(rows) > 1:
        lines.insert(1, "|" + " --- |" * width)
    title = _cell(caption) if isinstance(caption, heavy.Tag) else ""
    return "\n".join([title, *lines] if title else lines)


def _clean(text: str) -> str:
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    joined = "\n".join(line for line in lines if line)
    return joined if joined not in ("-", "|") else ""
