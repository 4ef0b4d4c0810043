"""`corpus://<collection>/<relative/path>` URLs: the only way a local document is named outside the index."""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, urlsplit

SCHEME = "corpus"
BUILTIN_COLLECTION = "python-reference"

# Collection names become URL hosts, so keep them to characters a host survives (lower case, since
# URL normalisation lower-cases hosts).
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")


def is_corpus_url(url: str) -> bool:
    return url.strip().lower().startswith(f"{SCHEME}://")


def corpus_url(collection: str, path: str) -> str:
    """The URL of a document; `path` is relative, with `/` separators."""
    return f"{SCHEME}://{collection}/{quote(path, safe='/')}"


def parse_corpus_url(url: str) -> tuple[str, str]:
    """(collection, relative path) of a corpus URL; ValueError if it is not one."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() != SCHEME or not parts.netloc:
        raise ValueError(f"not a {SCHEME}:// URL: {url!r}")
    path = unquote(parts.path).strip("/")
    if not path:
        raise ValueError(f"{url!r} names a collection, not a document")
    return parts.netloc.lower(), path


def is_valid_name(name: str) -> bool:
    return bool(_NAME_RE.match(name))


def slugify(text: str) -> str:
    """A valid collection name derived from free text (e.g. a folder name)."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")
    return slug[:63] or "corpus"
