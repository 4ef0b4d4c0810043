"""The README and docs/ stay short, linked and true to the code: the settings page is generated from
`Settings`, every relative link resolves, and every setting the docs name exists."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
from pydantic import Field

from sleuth.cli.config_docs import env_name, render
from sleuth.config import Settings

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CONFIGURATION = ROOT / "docs" / "configuration.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
# Environment variables the scripts, docker-compose.yml and the CLI's client side read besides the settings.
NOT_SETTINGS = {
    "SLEUTH_TEST_DATABASE_URL",  # tests/support/databases.py, scripts/test
    "SLEUTH_TEST_WORKERS",  # scripts/test
    "SLEUTH_TEST_REDIS_URL",  # tests/support/cluster.py
    "SLEUTH_E2E_CHROMIUM",  # tests/e2e/conftest.py
    "SLEUTH_EVAL_DATA_DIR",  # scripts/eval
    "SLEUTH_WORKER_CONCURRENCY",  # docker-compose.yml
    # `sleuth research --server` (cli/remote.py): the client's, not the server's
    "SLEUTH_SERVER_URL",
    "SLEUTH_SERVER_API_KEY",
    "SLEUTH_SERVER_API_KEY_FILE",
}


def _prose(text: str) -> str:
    """The text without fenced code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    anchors: set[str] = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug, n = _slug(heading), 1
        while slug in anchors:  # GitHub numbers repeated headings: x, x-1, x-2
            slug, n = f"{_slug(heading)}-{n}", n + 1
        anchors.add(slug)
    return anchors


def broken_links(page: Path) -> list[str]:
    """Every relative link of `page` whose file, or heading within it, does not exist."""
    broken = []
    for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target} (no such heading)")
    return broken


def test_the_readme_is_at_most_300_lines() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= 300, f"README.md has {lines} lines; move detail into a page under docs/"


def test_the_configuration_page_is_generated_from_the_settings() -> None:
    expected = render()
    actual = CONFIGURATION.read_text(encoding="utf-8") if CONFIGURATION.exists() else ""
    diff = "".join(difflib.unified_diff(actual.splitlines(True), expected.splitlines(True), "committed", "generated"))
    assert actual == expected, f"docs/configuration.md is out of date: run scripts/gen-config-docs\n{diff[:3000]}"


def test_the_configuration_page_lists_every_setting_with_its_default() -> None:
    text = CONFIGURATION.read_text(encoding="utf-8")
    assert f"| `{env_name('max_runs')}` | integer, ≥ 1 | `16` |" in text
    assert f"| `{env_name('mode')}` | `light` or `heavy` | `heavy` |" in text
    for name in Settings.model_fields:
        assert f"| `{env_name(name)}` |" in text, name


def test_a_setting_without_a_description_cannot_be_documented() -> None:
    class Undocumented(Settings):
        mystery_knob_s: float = Field(default=1.0)

    with pytest.raises(ValueError, match="SLEUTH_MYSTERY_KNOB_S has no description"):
        render(Undocumented)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_points_at_an_existing_file(page: Path) -> None:
    assert broken_links(page) == [], f"{page.relative_to(ROOT)} has broken links"


def test_a_link_to_a_missing_file_or_heading_is_caught(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# Here\n\n## Sources and `corpus`\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#sources-and-corpus) [web](https://example.com/x) [self](#title)\n"
        "# Title\n[gone](missing.md) [bad anchor](there.md#nowhere) `[code](ignored.md)`\n"
        "```\n[fenced](ignored.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == ["missing.md (no such file)", "there.md#nowhere (no such heading)"]


def test_every_setting_the_docs_name_exists() -> None:
    known = {env_name(name) for name in Settings.model_fields} | NOT_SETTINGS
    for page in PAGES:
        named = set(re.findall(r"\bSLEUTH_[A-Z0-9_]*[A-Z0-9]\b", page.read_text(encoding="utf-8")))
        assert named <= known, f"{page.relative_to(ROOT)} names settings that do not exist: {sorted(named - known)}"
