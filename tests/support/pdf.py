"""PDFs built by hand (pypdf reads PDFs but does not typeset them): a valid one-page PDF, and
crafted ones that a hostile upload could send, each small on the wire."""

from __future__ import annotations

import zlib

_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def minimal_pdf(text: str, title: str | None = None) -> bytes:
    """A valid one-page PDF showing `text` in Helvetica, with an xref table and an optional title."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        _page(parent=2, font=4, contents=5),
        _FONT,
        _stream(_show(text)),
    ]
    if title is not None:
        objects.append(f"<< /Title ({title}) >>".encode())
    return _assemble(objects, info=len(objects) if title is not None else None)


def deflate_bomb_pdf(inflated_mb: int = 100) -> bytes:
    """One page whose content stream inflates to `inflated_mb` MB (past pypdf's 75 MB cap) from ~0.1 %."""
    return _one_page(_show("bomb") + b"\n", b" " * 1_000_000, inflated_mb)


def operator_stream_pdf(mb: int = 15) -> bytes:
    """One page whose content stream holds `mb` MB of path operators (past pypdf's 2 million tokens)."""
    return _one_page(_show("operators") + b"\n", b"0 0 m\n" * 166_667, mb)


def deep_page_tree_pdf(depth: int = 101) -> bytes:
    """A page under `depth` nested /Pages nodes (pypdf allows 100)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    page = depth + 2
    for level in range(depth):
        number = 2 + level
        kid = number + 1 if level < depth - 1 else page
        parent = b" /Parent %d 0 R" % (number - 1) if level else b""
        objects.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1%s >>" % (kid, parent))
    objects += [_page(parent=page - 1, font=page + 1, contents=page + 2), _FONT, _stream(_show("deep"))]
    return _assemble(objects)


def shared_stream_pdf(pages: int = 2000, operators: int = 50_000) -> bytes:
    """`pages` pages that all draw one compressed stream of `operators` path operators: a few hundred
    kilobytes, within every limit of the reader, which parses the stream again for each page."""
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        _FONT,
        _deflated(_show("slow") + b"\n", b"0 0 m\n" * 10_000, operators // 10_000),
    ]
    objects += [_page(parent=2, font=3, contents=4) for _ in range(pages)]
    return _assemble(objects)


def _show(text: str) -> bytes:
    return f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()


def _page(*, parent: int, font: int, contents: int) -> bytes:
    return (
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >>"
        b" /Contents %d 0 R >>" % (parent, font, contents)
    )


def _one_page(head: bytes, block: bytes, mb: int) -> bytes:
    return _assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            _page(parent=2, font=4, contents=5),
            _FONT,
            _deflated(head, block, mb * 1_000_000 // len(block)),
        ]
    )


def _stream(data: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def _deflated(head: bytes, block: bytes, repeat: int) -> bytes:
    """A FlateDecode stream of `head` and `block` repeated, compressed block by block (small memory)."""
    compressor = zlib.compressobj(9)
    data = compressor.compress(head) + b"".join(compressor.compress(block) for _ in range(repeat))
    data += compressor.flush()
    return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"


def _assemble(objects: list[bytes], info: int | None = None) -> bytes:
    """Numbered objects (1 is the catalog), an xref table and a trailer."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    info_ref = b" /Info %d 0 R" % info if info is not None else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info_ref, xref)
    return bytes(out)
