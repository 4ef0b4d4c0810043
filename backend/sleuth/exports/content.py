"""A report's text as every export may hold it: characters XML 1.0 allows, and images as text.

DOCX is XML and refuses the rest outright; a PDF would draw them as missing glyphs; a markdown file
would carry them on. Images are never loaded by any export: a report's image is a URL someone wrote,
and loading it would read a server file or fetch from wherever it points.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from sleuth.core.markdown import image_as_text, rewrite_images
from sleuth.stream.results import ResearchResult

# C0 controls but tab, line feed and carriage return; U+FFFE and U+FFFF; lone surrogates.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_BREAKS = re.compile("[\x0b\x0c]")  # vertical tab and form feed part words, as a space does

Report = TypeVar("Report", bound=ResearchResult)


def xml_text(text: str) -> str:
    """`text` with every character XML 1.0 cannot hold removed (the two that part words become a space)."""
    return _NOT_XML.sub("", _BREAKS.sub(" ", text))


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return xml_text(value)
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    return value


def exportable(report: Report) -> Report:
    """The report every export renders: each of its strings XML-clean, each image in its markdown text."""
    clean = type(report).model_validate(_clean(report.model_dump()))
    return clean.model_copy(
        update={
            "question": rewrite_images(clean.question, image_as_text),
            "summary": rewrite_images(clean.summary, image_as_text),
            "markdown": rewrite_images(clean.markdown, image_as_text),
            "key_findings": [
                finding.model_copy(update={"text": rewrite_images(finding.text, image_as_text)})
                for finding in clean.key_findings
            ],
        }
    )
