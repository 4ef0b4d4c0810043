"""The credibility heuristic and the unsafe-citation check the citation verifier reuses."""

from __future__ import annotations

import pytest

from sleuth.config import Settings
from sleuth.tools.web.credibility import HIGH, INSTITUTIONAL, LOW, MEDIUM, credibility, is_unsafe_citation_url


@pytest.mark.parametrize(
    ("url", "score"),
    [
        ("https://en.wikipedia.org/wiki/Python", HIGH),
        ("https://docs.python.org/3/reference/datamodel.html", HIGH),
        ("https://arxiv.org/abs/1706.03762", HIGH),
        ("https://www.nature.com/articles/x", HIGH),
        ("https://www.nasa.gov/", INSTITUTIONAL),
        ("https://cs.stanford.edu/people", INSTITUTIONAL),
        ("https://www.gov.uk/guidance", INSTITUTIONAL),
        ("https://www.ox.ac.uk/", INSTITUTIONAL),
        ("https://blog.example.com/post", MEDIUM),
        ("https://wikipedia.org.evil.example/", MEDIUM),  # a look-alike is not the reference host
        ("https://bit.ly/abc", LOW),
        ("https://t.co/abc", LOW),
        ("http://tinyurl.com/abc", LOW),
        ("https://goo.gl/abc", LOW),
        ("http://93.184.216.34/page", LOW),
        ("http://[2606:4700::1]/", LOW),
        ("http://2130706433/", LOW),  # a decimal IPv4 spelling is still an IP host
        ("ftp://example.com/file", 0.0),
        ("javascript:alert(1)", 0.0),
        ("corpus://python-reference/descriptors", 1.0),
    ],
)
def test_scores(url: str, score: float) -> None:
    result = credibility(url)
    assert result.score == score
    assert result.reason


def test_default_threshold_separates_low_from_unknown() -> None:
    threshold = Settings().credibility_threshold
    assert credibility("https://bit.ly/x").score <= threshold < credibility("https://unknown.example/").score


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://bit.ly/abc", "bit.ly is a URL shortener"),
        ("https://T.CO/abc", "t.co is a URL shortener"),
        ("http://10.0.0.1/x", "host 10.0.0.1 is a raw IP address"),
        ("http://[::1]/x", "host ::1 is a raw IP address"),
        ("ftp://example.com/x", "scheme 'ftp' is not http or https"),
        ("file:///etc/passwd", "scheme 'file' is not http or https"),
        ("data:text/html,hi", "scheme 'data' is not http or https"),
        ("example.com/no-scheme", "scheme '(none)' is not http or https"),
        ("https:///nohost", "URL has no host"),
    ],
)
def test_unsafe_citation_urls(url: str, reason: str) -> None:
    assert is_unsafe_citation_url(url) == reason


@pytest.mark.parametrize(
    "url",
    ["https://docs.python.org/3/", "http://blog.example.com/a", "corpus://python-reference/x", "CORPUS://notes/a.md"],
)
def test_safe_citation_urls(url: str) -> None:
    assert is_unsafe_citation_url(url) is None
