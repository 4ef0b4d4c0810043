"""The report as PDF (fpdf2): the same document as the markdown export, with a Unicode font embedded."""

from __future__ import annotations

from functools import cache
from typing import Any

from sleuth.core import heavy
from sleuth.core.markdown import image_caption
from sleuth.exports.fonts import FontSet, find_fonts
from sleuth.exports.structure import report_html
from sleuth.stream.results import ResearchResult

SANS = "DejaVu"
MONO = "DejaVuMono"
CJK = "MicroHei"


class ImageRefused(RuntimeError):
    """The PDF export tried to load an image, which it never does."""


# Line height as a multiple of the font size. fpdf2's 1.0 puts a line's underscores and descenders
# on the ascenders of the line below (DejaVu reaches 1.16 em from its descent to its ascent); code is
# set a little looser than prose, as `__dunder__` names sit on the baseline's edge.
TEXT_LINE_HEIGHT = 1.3
CODE_LINE_HEIGHT = 1.4


@cache
def _pdf_class() -> type[heavy.FPDF]:
    """fpdf2's document class as the export uses it (made on first use: fpdf2 loads with it)."""

    class _HTML(heavy.HTML2FPDF):
        """fpdf2's HTML writer with `<img>` written as its alt text and URL: never read, never fetched.

        The report's HTML holds no `<img>` (its parser renders images as text); this holds even if one
        came. Lines are spaced so that one line's glyphs never touch the next's.
        """

        def _new_paragraph(
            self,
            align: Any = None,
            line_height: float | None = 1.0,
            top_margin: float = 0,
            bottom_margin: float = 0,
            indent: Any = 0,
            bullet: str = "",
        ) -> None:
            # fpdf2 passes 1.0 (or None: "the region's", also 1.0) for every paragraph it spaces by
            # default; 0 (a list's spacer) and a line height set in the HTML are kept.
            if line_height is None or line_height == 1.0:
                line_height = CODE_LINE_HEIGHT if self._pre_formatted else TEXT_LINE_HEIGHT
            super()._new_paragraph(align, line_height, top_margin, bottom_margin, indent, bullet)

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag != "img":
                super().handle_starttag(tag, attrs)
                return
            given = dict(attrs)
            super().handle_starttag(tag, [(name, value) for name, value in attrs if name != "src"])
            caption = image_caption(given.get("alt") or "", (given.get("src") or "").strip())
            if caption and self.td_th is None:
                self.handle_data(caption)

    class _PDF(heavy.FPDF):
        """FPDF that writes HTML images as text and loads no image at all, and that keeps the page font
        when a line starts with a fallback (CJK) glyph.

        fpdf2 2.8 sets the main font for such a line inside the line's own q/Q block, then believes
        the page has it: every later line on the page is drawn with no font at all (py-pdf/fpdf2#1772).
        Setting the main font on the page first, outside any block, avoids that path.
        """

        HTML2FPDF_CLASS = _HTML

        def image(self, *args: Any, **kwargs: Any) -> Any:
            """Refused: an image's path or URL would make the server read a file or fetch a URL."""
            raise ImageRefused("the PDF export loads no image")

        def _render_styled_text_line(self, text_line: heavy.TextLine, *args: Any, **kwargs: Any) -> bool:
            fragments = text_line.fragments
            if (
                fragments
                and self.current_font is not None
                and not self.current_font_is_set_on_page
                and not kwargs.get("prevent_font_change", False)
                and fragments[0].font.fontkey in self._fallback_font_ids
            ):
                self._out(self._set_font_for_page(self.current_font, self.font_size_pt))
            return super()._render_styled_text_line(text_line, *args, **kwargs)

    return _PDF


def _new_pdf(fonts: FontSet, title: str) -> heavy.FPDF:
    pdf = _pdf_class()(format="A4")
    pdf.set_margins(18, 18, 18)
    pdf.set_auto_page_break(True, margin=18)
    pdf.add_font(SANS, "", str(fonts.sans))
    pdf.add_font(SANS, "B", str(fonts.sans_bold))
    pdf.add_font(SANS, "I", str(fonts.sans_italic))
    pdf.add_font(SANS, "BI", str(fonts.sans_bold_italic))
    pdf.add_font(MONO, "", str(fonts.mono))
    pdf.add_font(MONO, "B", str(fonts.mono_bold))
    pdf.add_font(MONO, "I", str(fonts.mono_italic))
    pdf.add_font(MONO, "BI", str(fonts.mono_bold_italic))
    if fonts.cjk is not None:
        pdf.add_font(CJK, "", str(fonts.cjk))
        # Per glyph: characters DejaVu lacks come from the CJK face, in bold and italic runs too.
        pdf.set_fallback_fonts([CJK], exact_match=False)
    pdf.set_title(title)
    pdf.set_creator("Sleuth")
    pdf.add_page()
    pdf.set_font(SANS, size=10.5)
    return pdf


def _write(pdf: heavy.FPDF, html: str) -> None:
    pdf.write_html(
        html,
        font_family=SANS,
        li_prefix_color="#555555",  # fpdf2's default is red, loud beside blue citation links
        tag_styles={
            "h1": heavy.FontFace(family=SANS, emphasis="BOLD", size_pt=18, color="#1a1a1a"),
            "h2": heavy.FontFace(family=SANS, emphasis="BOLD", size_pt=14, color="#1a1a1a"),
            "h3": heavy.FontFace(family=SANS, emphasis="BOLD", size_pt=12, color="#1a1a1a"),
            "code": heavy.FontFace(family=MONO, size_pt=9.5),
            "pre": heavy.FontFace(family=MONO, size_pt=9),
            "a": heavy.FontFace(color="#2457d6"),
        },
    )


def _render(report: ResearchResult, fonts: FontSet, sources_page: int) -> tuple[heavy.FPDF, int]:
    main, sources = report_html(report, str(sources_page))
    pdf = _new_pdf(fonts, report.title or report.question)
    _write(pdf, main)
    page = pdf.page_no()
    if sources:
        _write(pdf, sources)
    return pdf, page


def report_pdf(report: ResearchResult, fonts: FontSet | None = None) -> bytes:
    """Rendered twice: citations link to the page where the sources list starts, known only after a first pass."""
    fonts = fonts or find_fonts()
    _, sources_page = _render(report, fonts, 1)
    pdf, _ = _render(report, fonts, sources_page)
    return bytes(pdf.output())
