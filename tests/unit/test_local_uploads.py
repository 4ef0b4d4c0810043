"""Uploads into the library: read in bounded chunks, each file added or refused, a delete meanwhile is a conflict."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from sleuth.tools.local import library
from sleuth.tools.local.extract import extract
from support.clocks import StepClock

LIMITS = library.UploadLimits(max_file_bytes=3_000_000, max_files=5)


def in_process(path: Path, name: str, text_file: Path) -> str:
    extracted = extract(Path(name), path.read_bytes())
    text_file.write_text(extracted.text, encoding="utf-8")
    return extracted.title


class Reads(io.BytesIO):
    """A file that remembers how much each read asked for."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.sizes: list[int] = []

    def read(self, size: int | None = -1, /) -> bytes:
        self.sizes.append(-1 if size is None else size)
        return super().read(size)


def upload(name: str, data: bytes, size: int | None = None) -> library.Upload:
    return library.Upload(name, size, Reads(data))


def test_files_are_read_in_bounded_chunks_and_a_file_over_the_cap_is_refused_early(tmp_path: Path) -> None:
    db = tmp_path / "corpus.db"
    big = upload("big.txt", b"word " * 500_000)  # 2.5 MB, under the cap
    over = upload("over.txt", b"x" * 10_000_000)  # its size unknown in advance
    result = library.add_uploads(db, "notes", [big, over], LIMITS, in_process)
    assert [e.path for e in result.added] == ["big.txt"]
    assert [(r.filename, r.status) for r in result.refused] == [("over.txt", 413)]
    assert result.refused[0].reason == "larger than the 3.0 MB limit"
    for file in (big.stream, over.stream):
        assert isinstance(file, Reads) and file.sizes and all(0 < size <= 1 << 20 for size in file.sizes)
    assert isinstance(over.stream, Reads) and over.stream.tell() == 3 * (1 << 20)  # stopped past the cap


def test_a_file_whose_stated_size_is_over_the_cap_is_not_read(tmp_path: Path) -> None:
    stated = upload("stated.txt", b"x" * 10, size=5_000_000)
    with pytest.raises(library.UploadRefused) as refused:
        library.add_uploads(tmp_path / "corpus.db", "notes", [stated], LIMITS, in_process)
    assert (refused.value.status, str(refused.value)) == (413, "stated.txt: 5.0 MB is over the 3.0 MB limit")
    assert isinstance(stated.stream, Reads) and stated.stream.sizes == []


def test_a_collection_deleted_while_its_upload_is_extracted_is_a_conflict(tmp_path: Path) -> None:
    db = tmp_path / "corpus.db"
    library.add_uploads(db, "notes", [upload("a.md", b"# A\n\nFirst note.\n")], LIMITS, in_process)

    def deleting(path: Path, name: str, text_file: Path) -> str:
        library.delete_collection(db, "notes")  # another request, between the check and the write
        return in_process(path, name, text_file)

    with pytest.raises(library.LibraryError) as conflict:
        library.add_uploads(db, "notes", [upload("b.md", b"# B\n\nSecond note.\n")], LIMITS, deleting)
    assert conflict.value.status == 409
    assert str(conflict.value) == "collection 'notes' was deleted while the files were read; nothing was added"
    with pytest.raises(library.LibraryError, match="no collection named 'notes'"):
        library.list_documents(db, "notes")


def test_extracting_an_upload_logs_a_progress_line_every_few_seconds_and_one_at_the_end(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = StepClock()

    def slow(path: Path, name: str, text_file: Path) -> str:
        clock.t += 2  # each file takes two seconds to extract
        return in_process(path, name, text_file)

    files = [upload(f"note{i}.txt", b"word " * 200_000, size=1_000_000) for i in range(5)]
    with caplog.at_level("INFO", logger=library.__name__):
        library.add_uploads(tmp_path / "corpus.db", "notes", files, LIMITS, slow, clock=clock)
    lines = [r.getMessage() for r in caplog.records if r.name == library.__name__]
    assert lines == [
        # due after the third file (6 s >= 5 s), not again by the fifth (10 s - 6 s < 5 s)
        "extracting an upload to 'notes': 3/5 files, 3.0/5.0 MB, 0.5 files/s, 0.5 MB/s, about 4s left",
        "extracted an upload to 'notes': 5/5 files, 5.0/5.0 MB, 0.5 files/s, 0.5 MB/s in 10.0 s",
    ]
