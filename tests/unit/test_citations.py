import pytest
from markdown_it import MarkdownIt

from sleuth.core.markdown import cited_numbers, rewrite_citations, rewrite_images
from sleuth.research.report.citations import verify_report
from sleuth.research.sources import Numbering, SourceRegistry, collapse_citations
from sleuth.stream.documents import Document
from sleuth.tools.web.credibility import is_unsafe_citation_url as unsafe_citation_reason

A, B, C = (Document.from_url(f"https://site{i}.org/page", title=t) for i, t in enumerate("ABC"))


def test_markers_are_found_outside_code_only() -> None:
    text = "Fact [1]. Two [2, 3][4]. Code `x[5]` and\n```\ny[6]\n```\nindex items[7] and link [8](https://a.org)."
    assert cited_numbers(text) == [1, 2, 3, 4]


def test_rewrite_drops_unmapped_and_merges_duplicates() -> None:
    assert rewrite_citations("X [1][2] and [3].", {1: 5, 2: 5, 3: None}.get) == "X [5] and."


def test_collapse_reuses_numbers_in_tab_order() -> None:
    first, second = Numbering(), Numbering()
    first.number(A), first.number(B)
    second.number(B), second.number(C)
    numbering = Numbering()
    out = collapse_citations([("a [1] b [2] c [7]", first), ("d [1] e [2]", second)], numbering)
    assert out[0].text == "a [1] b [2] c" and out[0].dropped == [7]
    assert out[1].text == "d [2] e [3]"
    assert [d.title for d in out[1].cited] == ["B", "C"]
    assert numbering.by_number == {1: A, 2: B, 3: C}


def test_uncited_documents_get_no_global_number() -> None:
    local = Numbering()
    local.number(A), local.number(B)
    numbering = Numbering()
    collapse_citations([("only [2]", local)], numbering)
    assert numbering.by_number == {1: B}


def test_verification_keeps_retrieved_sources_and_renumbers_without_gaps() -> None:
    registry = SourceRegistry()
    registry.add(A), registry.add(C)
    shortened = Document.from_url("https://bit.ly/abc", title="short")
    registry.add(shortened)
    given = {1: A, 2: B, 3: C, 4: shortened}
    verified = verify_report(
        "S [3] then [1][2] and [4] and [9]. [x](javascript:alert(1)) [y](https://site0.org/page)",
        given,
        registry,
        unsafe_citation_reason,
    )
    assert verified.markdown.startswith("S [1] then [2] and")
    assert [(s.number, s.title) for s in verified.sources] == [(1, "C"), (2, "A")]
    reasons = {r.marker: r.reason for r in verified.removed}
    assert "not retrieved" in reasons["[2]"] and "shortener" in reasons["[4]"] and "no source" in reasons["[9]"]
    assert "scheme" in reasons["javascript:alert(1)"]
    assert "[y](https://site0.org/page)" in verified.markdown and "javascript" not in verified.markdown


def test_url_safety() -> None:
    assert unsafe_citation_reason("https://docs.python.org/3/") is None
    assert unsafe_citation_reason("corpus://python-reference/attribute-access") is None
    assert "raw IP" in (unsafe_citation_reason("http://93.184.216.34/x") or "")
    assert "raw IP" in (unsafe_citation_reason("http://[::1]/x") or "")
    assert "scheme" in (unsafe_citation_reason("file:///etc/passwd") or "")
    assert "shortener" in (unsafe_citation_reason("https://www.tinyurl.com/x") or "")


def test_raw_html_is_removed_from_the_report_but_code_keeps_it() -> None:
    registry = SourceRegistry()
    registry.add(A)
    text = (
        'Fact [1] <script>alert(1)</script><b onmouseover="x()">bold</b> '
        '<a href="javascript:alert(2)">link</a> <img src=x onerror=alert(3)> <iframe src="javascript:1"></iframe>'
        " and `<b>in code</b>` and a < b.\n```html\n<script>kept()</script>\n```"
    )
    verified = verify_report(text, {1: A}, registry, unsafe_citation_reason)
    prose = verified.markdown.split("```")[0]
    assert "<" not in prose.replace("`<b>in code</b>`", "").replace("a < b", "")
    assert "bold" in prose and "link" in prose and "alert(1)" not in prose
    assert "`<b>in code</b>`" in verified.markdown and "<script>kept()</script>" in verified.markdown
    assert sum(r.reason.startswith("raw HTML") for r in verified.removed) >= 5


@pytest.mark.parametrize(
    "code",
    [
        "~~~python\nitems[1] = [2]\nsee <b>x</b> and http://10.0.0.1/x\n~~~",
        "    items[1] = [2]\n    see <b>x</b> and http://10.0.0.1/x",
        "``items[1] = `[2]` <b>x</b> http://10.0.0.1/x``",
        "```\nitems[1] = [2] <b>x</b> http://10.0.0.1/x",  # unclosed: code to the end, as browsers render it
    ],
)
def test_code_is_what_a_commonmark_renderer_calls_code(code: str) -> None:
    markdown = f"Outside [1] and <b>bold</b>.\n\n{code}\n"
    assert cited_numbers(markdown) == [1]
    assert rewrite_citations(markdown, lambda n: n + 10) == markdown.replace("Outside [1]", "Outside [11]")
    registry = SourceRegistry()
    doc = Document(id="d1", url="https://docs.python.org/3/x", title="x", snippet="", source="web")
    registry.add(doc)
    verified = verify_report(markdown, {1: doc}, registry, unsafe_citation_reason)
    assert verified.markdown == f"Outside [1] and bold.\n\n{code}"
    assert [r.marker for r in verified.removed] == ["<b>", "</b>"]


def test_an_image_becomes_its_alt_text_and_keeps_its_url_only_when_retrieved() -> None:
    registry = SourceRegistry()
    registry.add(A)
    text = (
        "Logo ![the logo](/srv/app/logo.png) here [1]. ![x](/etc/passwd) ![y](http://127.0.0.1:8080/x.png)"
        ' ![z](https://example.com/z.png "title") ![shown](https://site0.org/page) ![](https://example.com/empty.png)'
        " and `![code](/kept.png)` as code."
    )
    verified = verify_report(text, {1: A}, registry, unsafe_citation_reason)
    assert verified.markdown == (
        "Logo the logo here [1]. x y z shown (https://site0.org/page)  and `![code](/kept.png)` as code."
    )
    reasons = {r.marker: r.reason for r in verified.removed}
    assert set(reasons) == {
        "/srv/app/logo.png",
        "/etc/passwd",
        "http://127.0.0.1:8080/x.png",
        "https://example.com/z.png",
        "https://example.com/empty.png",
    }
    assert all(reason.startswith("image not shown: ") for reason in reasons.values())
    assert "scheme" in reasons["/etc/passwd"] and "raw IP" in reasons["http://127.0.0.1:8080/x.png"]
    assert "not retrieved" in reasons["https://example.com/z.png"]


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("a ![alt](/x.png) b", "a <alt|/x.png> b"),
        (r"""![alt](<a b.png> "t") ![t](u 't') ![p](u (t))""", "<alt|a b.png> <t|u> <p|u>"),
        ("![a [b] c](/x(1).png)", "<a [b] c|/x(1).png>"),
        ("![outer ![inner](/i.png)](/o.png)", "<outer <inner|/i.png>|/o.png>"),
        (r"\![text](/x.png) and \\![image](/y.png)", r"\![text](/x.png) and \\<image|/y.png>"),
        (
            "![ref][r] and ![short]\n\n[r]: /etc/passwd\n[short]: /s",
            r"!\[ref][r] and !\[short]" + "\n\n[r]: /etc/passwd\n[short]: /s",
        ),
        ("```\n![code](/x.png)\n```", "```\n![code](/x.png)\n```"),
    ],
)
def test_rewrite_images_leaves_no_image_a_renderer_would_load(markdown: str, expected: str) -> None:
    rewritten = rewrite_images(markdown, lambda alt, url: f"<{alt}|{url}>")
    assert rewritten == expected
    parsed = MarkdownIt("commonmark").parse(rewritten)
    assert not [token for block in parsed for token in block.children or [] if token.type == "image"]
