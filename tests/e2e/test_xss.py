"""Hostile text renders inert: a corpus document and a model's output carrying `<script>`,
`<img onerror>`, `javascript:` links and friends. Every payload, if it ran, would open a dialog
and/or set `window.__pwned`; the DOM must hold no event-handler attribute and no
`javascript:` URL anywhere, and the payload text must really have reached the page (else the
test proves nothing)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .scripted import XSS_MARKER
from .servers import Server, start_server, stop_server
from .ui import ask, current_run, lane, lanes_region, open_timeline, report, sources_panel

CORPUS_MD = """\
# The quokka lantern protocol

The quokka lantern protocol negotiates frame sizes during a two-step handshake between a lantern client and a lantern server.

During the handshake the quokka lantern protocol offers frame sizes <script>window.__pwned = 'corpus-script'; alert('corpus-script')</script> and the server picks the largest frame size it supports.

A lantern server that cannot accept the offered frame sizes replies with an error <img src=x onerror="window.__pwned = 'corpus-img'; alert('corpus-img')"> and the quokka lantern protocol closes the connection.

The quokka lantern protocol documentation about frame sizes is at [the lantern spec](javascript:window.__pwned='corpus-md-link';alert('corpus-md-link')) and <a href="javascript:window.__pwned='corpus-a-link';alert('corpus-a-link')">the negotiation notes</a>.

Frame sizes in the quokka lantern protocol are powers of two between 512 and 65536 bytes.

## Frame size negotiation

The quokka lantern protocol retries frame size negotiation at most three times <svg onload="window.__pwned='corpus-svg'"></svg> before it gives up <iframe src="javascript:window.__pwned='corpus-iframe'"></iframe>.
"""

CORPUS_HTML = """\
<html><head><title>Quokka lantern frame sizes <script>alert('html-title')</script></title></head><body>
<h1>Quokka lantern frame sizes</h1>
<p>The quokka lantern protocol picks frame sizes by asking the server first. <img src=x onerror="window.__pwned='html-img';alert('html-img')"></p>
<p>Quokka lantern frame sizes are cached per connection. <a href="javascript:window.__pwned='html-link'">spec</a>
&lt;script&gt;window.__pwned='html-escaped'&lt;/script&gt; &lt;img src=x onerror=alert('html-escaped-img')&gt;</p>
<script>window.__pwned = 'html-script'</script>
</body></html>
"""

# Everything in the page that could run code or navigate to script.
DANGER = """
() => {
  const found = [];
  for (const el of document.querySelectorAll('*')) {
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase();
      const value = attr.value.replace(/[\\s\\u0000-\\u001f]/g, '').toLowerCase();
      if (name.startsWith('on')) found.push(`${el.tagName} ${name}=${attr.value}`);
      const urlish = ['href', 'src', 'action', 'formaction', 'xlink:href', 'srcdoc', 'data', 'poster'].includes(name);
      // data: URLs only from the app's own stylesheet/favicon, never inside the thread.
      const bad = el.closest('.thread') ? /^(javascript|vbscript|data):/ : /^(javascript|vbscript):/;
      if (urlish && bad.test(value)) found.push(`${el.tagName} ${name}=${attr.value}`);
    }
  }
  // The app draws its own icons (svg) and the clarification card (form) in the thread; in
  // rendered model/web text (.md) none of these may appear at all.
  for (const el of document.querySelectorAll('.thread :is(script, img, iframe, frame, object, embed, style, link, meta, base)'))
    found.push(`<${el.tagName.toLowerCase()}> in the thread`);
  for (const el of document.querySelectorAll('.thread .md :is(svg, math, form, input, button:not(.cite-chip), textarea)'))
    found.push(`<${el.tagName.toLowerCase()}> in rendered markdown`);
  for (const el of document.querySelectorAll('script'))
    if (!/^\\/assets\\/[\\w.-]+\\.js$/.test(el.getAttribute('src') || '')) found.push(`script ${el.outerHTML.slice(0, 80)}`);
  return found;
}
"""


def assert_inert(page: Page, dialogs: list[str]) -> None:
    # Pointer and focus events on everything in the thread that a payload could have hooked.
    for el in page.locator(".thread .md a, .thread .md b, .thread .cite-chip").all()[:40]:
        for event in ("mouseover", "mouseenter", "focus"):
            el.dispatch_event(event)
    assert page.evaluate("() => window.__pwned") is None, "a payload ran"
    assert dialogs == [], f"a payload opened a dialog: {dialogs}"
    assert page.evaluate(DANGER) == []


def _open_all_findings(page: Page) -> None:
    open_timeline(current_run(page))  # a finished run folds its lanes under the report
    for summary in current_run(page).locator("details.lane-report > summary").all():
        summary.click()


@pytest.fixture(scope="module")
def hostile_corpus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("hostile-corpus")
    corpus = root / "corpus"
    corpus.mkdir()
    (corpus / "quokka.md").write_text(CORPUS_MD)
    (corpus / "lantern.html").write_text(CORPUS_HTML)
    server = start_server("hostile-corpus", root, {"SLEUTH_CORPUS": str(corpus)})
    yield server
    stop_server(server)


@pytest.mark.e2e
def test_a_hostile_corpus_document_renders_inert(
    page: Page, hostile_corpus_server: Server, shot: Callable[..., Path], dialogs: list[str]
) -> None:
    page.goto(hostile_corpus_server.base_url)
    ask(page, "How does the quokka lantern protocol negotiate frame sizes?", clarify=False)
    run = current_run(page)
    rep = report(run)
    expect(rep.get_by_text("Verified report")).to_be_visible()
    _open_all_findings(page)
    shot("hostile-corpus-report", whole_thread=True)

    # The payloads reached the page, as text: in the lanes' findings and the final report.
    lanes = lanes_region(run).first
    expect(lane(lanes, 1)).to_contain_text("quokka lantern protocol")
    expect(run.locator(".lane-report").filter(has_text="window.__pwned").first).to_be_visible()
    expect(rep.locator(".report-body")).to_contain_text("quokka lantern protocol")
    expect(rep.locator(".report-body")).to_contain_text("window.__pwned")
    expect(sources_panel(run)).to_contain_text("quokka")

    assert_inert(page, dialogs)


@pytest.mark.e2e
def test_hostile_model_output_renders_inert(
    page: Page, scripted_server: Server, shot: Callable[..., Path], dialogs: list[str]
) -> None:
    page.goto(scripted_server.base_url)
    ask(page, f"How do descriptors work? ({XSS_MARKER})", clarify=False)
    run = current_run(page)
    rep = report(run)
    expect(rep.get_by_text("Verified report")).to_be_visible()
    _open_all_findings(page)
    for thinking in run.locator("details:not(.lane-report):not(.timeline-fold) > summary").all():
        if thinking.is_visible():  # a collapsed block nested in another is opened with its parent
            thinking.click()
    shot("hostile-model-report", whole_thread=True)

    # The payload came through the plan, the thinking line, the agents' findings and the report.
    expect(run.get_by_role("region", name="Research plan")).to_contain_text("Check the odd text")
    expect(run.locator(".lane-report").filter(has_text="Payload start").first).to_be_visible()
    body = rep.locator(".report-body")
    expect(body).to_contain_text("Descriptors win over __getattr__")
    expect(body).to_contain_text("Payload end.")
    # http(s) links survive, opening in a new tab without a referrer.
    docs = run.locator(".lane-report").first.get_by_role("link", name="the Python docs")
    expect(docs).to_have_attribute("href", "https://docs.python.org/3/reference/datamodel.html")
    expect(docs).to_have_attribute("target", "_blank")
    expect(docs).to_have_attribute("rel", "noopener noreferrer")
    # The javascript: links stay text, without an href.
    for name in ("a markdown javascript link", "an html javascript link", "javascript link"):
        for el in body.get_by_text(name, exact=True).all():
            assert el.get_attribute("href") is None
    expect(body.get_by_text(re.compile("bold hover text"))).to_be_visible()

    assert_inert(page, dialogs)
