"""The report as DOCX (python-docx), walked from the same markdown as the other exports.

Citations `[n]` link to a bookmark on source n in the sources list; source titles link to their URLs.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

from sleuth.core import heavy
from sleuth.exports.markdown import report_document
from sleuth.exports.structure import markdown_parser
from sleuth.stream.results import ResearchResult

LINK_COLOR = "2457D6"
MONO = "DejaVu Sans Mono"
_CITATION = re.compile(r"(?<!\w)\[(\d{1,4})\](?!\()")


def bookmark_name(number: int) -> str:
    return f"source_{number}"


@dataclass
class _Style:
    bold: bool = False
    italic: bool = False
    href: str | None = None


@dataclass
class _Writer:
    doc: heavy.DocxDocument
    sources: set[int]
    lists: list[str] = field(default_factory=list)  # "bullet" | "ordered", innermost last
    paragraph: heavy.Paragraph | None = None
    in_sources: bool = False
    bookmarks: int = 0

    # -- runs -----------------------------------------------------------------------------

    def _run(self, paragraph: heavy.Paragraph, text: str, style: _Style, *, mono: bool = False) -> None:
        if style.href:
            self._hyperlink(paragraph, text, style.href, external=True)
            return
        for i, piece in enumerate(_CITATION.split(text)):
            if i % 2 and int(piece) in self.sources and not mono:
                self._hyperlink(paragraph, f"[{piece}]", bookmark_name(int(piece)), external=False)
            elif piece:
                run = paragraph.add_run(piece if i % 2 == 0 else f"[{piece}]")
                run.bold, run.italic = style.bold or None, style.italic or None
                if mono:
                    run.font.name = MONO
                    run.font.size = heavy.Pt(9.5)

    def _hyperlink(self, paragraph: heavy.Paragraph, text: str, target: str, *, external: bool) -> None:
        link = heavy.OxmlElement("w:hyperlink")
        if external:
            link.set(
                heavy.qn("r:id"), paragraph.part.relate_to(target, heavy.RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
            )
        else:
            link.set(heavy.qn("w:anchor"), target)
        run = heavy.OxmlElement("w:r")
        props = heavy.OxmlElement("w:rPr")
        color = heavy.OxmlElement("w:color")
        color.set(heavy.qn("w:val"), LINK_COLOR)
        underline = heavy.OxmlElement("w:u")
        underline.set(heavy.qn("w:val"), "single")
        props.append(color)
        props.append(underline)
        run.append(props)
        node = heavy.OxmlElement("w:t")
        node.text = text
        node.set(heavy.qn("xml:space"), "preserve")
        run.append(node)
        link.append(run)
        paragraph._p.append(link)

    def _bookmark(self, paragraph: heavy.Paragraph, name: str) -> None:
        self.bookmarks += 1
        start = heavy.OxmlElement("w:bookmarkStart")
        start.set(heavy.qn("w:id"), str(self.bookmarks))
        start.set(heavy.qn("w:name"), name)
        end = heavy.OxmlElement("w:bookmarkEnd")
        end.set(heavy.qn("w:id"), str(self.bookmarks))
        paragraph._p.insert(0, start)
        paragraph._p.append(end)

    def inline(self, paragraph: heavy.Paragraph, token: heavy.Token) -> None:
        style = _Style()
        for child in token.children or []:
            kind = child.type
            if kind == "text":
                self._run(paragraph, child.content, style)
            elif kind == "code_inline":
                self._run(paragraph, child.content, style, mono=True)
            elif kind in ("softbreak", "hardbreak"):
                paragraph.add_run(" " if kind == "softbreak" else "\n")
            elif kind == "strong_open":
                style = _Style(True, style.italic, style.href)
            elif kind == "strong_close":
                style = _Style(False, style.italic, style.href)
            elif kind == "em_open":
                style = _Style(style.bold, True, style.href)
            elif kind == "em_close":
                style = _Style(style.bold, False, style.href)
            elif kind == "link_open":
                style = _Style(style.bold, style.italic, str(child.attrs.get("href") or "") or None)
            elif kind == "link_close":
                style = _Style(style.bold, style.italic, None)

    # -- blocks ---------------------------------------------------------------------------

    def list_paragraph(self, number: str) -> heavy.Paragraph:
        """Bullets use Word's list style; numbers are written out, since Word's numbering would run on
        from one list to the next and the sources' numbers must match their citations."""
        depth = min(len(self.lists), 3)
        if self.lists and self.lists[-1] == "ordered":
            paragraph = self.doc.add_paragraph()
            paragraph.paragraph_format.left_indent = heavy.Pt(18 * depth)
            paragraph.add_run(f"{number}. ")
            return paragraph
        return self.doc.add_paragraph(style="List Bullet" + (f" {depth}" if depth > 1 else ""))

    def table(self, tokens: list[heavy.Token], start: int) -> int:
        rows: list[list[heavy.Token]] = []
        i = start
        while tokens[i].type != "table_close":
            if tokens[i].type == "tr_open":
                rows.append([])
            elif tokens[i].type == "inline" and rows:
                rows[-1].append(tokens[i])
            i += 1
        if rows:
            width = max(len(r) for r in rows)
            table = self.doc.add_table(rows=len(rows), cols=width)
            table.style = "Table Grid"
            for r, row in enumerate(rows):
                for c, cell_token in enumerate(row):
                    paragraph = table.cell(r, c).paragraphs[0]
                    self.inline(paragraph, cell_token)
                    if r == 0:
                        for run in paragraph.runs:
                            run.bold = True
        return i

    def write(self, tokens: list[heavy.Token]) -> None:
        i = 0
        while i < len(tokens):
            token = tokens[i]
            kind = token.type
            if kind == "heading_open":
                level = int(token.tag[1])
                heading = self.doc.add_heading(level=min(level, 4) if level > 1 else 0)
                self.inline(heading, tokens[i + 1])
                self.in_sources = level == 2 and tokens[i + 1].content.strip() == "Sources"
                i += 2
            elif kind in ("bullet_list_open", "ordered_list_open"):
                self.lists.append("ordered" if kind == "ordered_list_open" else "bullet")
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.lists.pop()
            elif kind == "list_item_open":
                self.paragraph = self.list_paragraph(token.info)
                if self.in_sources and token.info.isdigit():
                    self._bookmark(self.paragraph, bookmark_name(int(token.info)))
            elif kind == "list_item_close":
                self.paragraph = None
            elif kind == "inline":
                target = self.paragraph if self.paragraph is not None else self.doc.add_paragraph()
                if self.paragraph is not None and len(target.runs) > (1 if self.lists[-1:] == ["ordered"] else 0):
                    target.add_run(" ")
                self.inline(target, token)
            elif kind in ("fence", "code_block"):
                code = self.doc.add_paragraph()
                self._run(code, token.content.rstrip("\n"), _Style(), mono=True)
            elif kind == "table_open":
                i = self.table(tokens, i)
            elif kind == "hr":
                self.doc.add_paragraph("―" * 12)
            i += 1


def report_docx(report: ResearchResult) -> bytes:
    doc = heavy.Document()
    doc.core_properties.title = report.title or report.question
    doc.core_properties.author = "Sleuth"
    tokens = markdown_parser().parse(report_document(report, rendered=True))
    _Writer(doc, {s.number for s in report.sources}).write(tokens)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()
