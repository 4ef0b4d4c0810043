"""Walk a folder the user named, and nothing outside it.

Every entry that is not indexed for a reason the user may not expect gets a `Skipped` line:
symlinks that leave the folder, symlink loops, dangling links, special files (FIFOs, sockets,
devices), unreadable folders, files over the size cap. Hidden entries and unsupported file types
are left out silently. Names that are not valid UTF-8 are kept under an escaped path.
"""

from __future__ import annotations

import errno
import os
import stat as statmode
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sleuth.tools.local.extract import is_supported


@dataclass(frozen=True)
class Found:
    """A regular file to index: its escaped relative path and the real path to open."""

    path: str
    real: Path
    mtime: float
    size: int


@dataclass
class ScanResult:
    files: list[Found] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (relative path, why)
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (escaped path, why)


def display_name(name: str) -> tuple[str, bool]:
    """`name` as valid UTF-8 text, and whether it had to be escaped.

    Python hands undecodable bytes over as lone surrogates, which SQLite and JSON refuse; a
    backslash escape keeps the name readable, unique and storable.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", errors="backslashreplace"), True
    return name, False


def _kind(mode: int) -> str:
    if statmode.S_ISFIFO(mode):
        return "FIFO"
    if statmode.S_ISSOCK(mode):
        return "socket"
    if statmode.S_ISCHR(mode) or statmode.S_ISBLK(mode):
        return "device"
    return "special file"


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Walker:
    def __init__(self, root: Path, max_bytes: int, supported: Callable[[Path], bool]) -> None:
        self.root = os.path.realpath(root)
        self.max_bytes = max_bytes
        self.supported = supported
        self.result = ScanResult()
        self.visited: set[tuple[int, int]] = set()

    def run(self) -> ScanResult:
        top = os.stat(self.root)
        self.visited.add((top.st_dev, top.st_ino))
        self._folder(self.root, "")
        self.result.files.sort(key=lambda f: f.path)
        return self.result

    def _skip(self, rel: str, why: str) -> None:
        self.result.skipped.append((rel, why))

    def _folder(self, real: str, rel: str) -> None:
        try:
            with os.scandir(real) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as exc:
            self._skip(rel or ".", f"unreadable folder ({exc.strerror or exc}); not indexed")
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            name, escaped = display_name(entry.name)
            child_rel = f"{rel}/{name}" if rel else name
            if escaped:
                self.result.renamed.append((child_rel, "name is not valid UTF-8; indexed under this escaped name"))
            self._entry(entry, child_rel)

    def _entry(self, entry: os.DirEntry[str], rel: str) -> None:
        path = entry.path
        if entry.is_symlink():
            try:
                target = os.path.realpath(path, strict=True)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    self._skip(rel, "symlink loop; not followed")
                else:
                    self._skip(rel, "dangling symlink; not followed")
                return
            if not _inside(target, self.root):
                self._skip(rel, "symlink leads outside the indexed folder; refused")
                return
            path = target
        try:
            info = os.stat(path)
        except OSError as exc:
            self._skip(rel, f"cannot stat ({exc.strerror or exc})")
            return
        if statmode.S_ISDIR(info.st_mode):
            key = (info.st_dev, info.st_ino)
            if key in self.visited:
                self._skip(rel, "symlink loop (folder already indexed above); not followed")
                return
            self.visited.add(key)
            self._folder(path, rel)
            return
        if not statmode.S_ISREG(info.st_mode):
            self._skip(rel, f"{_kind(info.st_mode)}, not a regular file; skipped")
            return
        if not self.supported(Path(entry.name)):
            return
        if info.st_size > self.max_bytes:
            self._skip(rel, f"too big ({_mb(info.st_size)} > the {_mb(self.max_bytes)} cap, SLEUTH_INDEX_MAX_FILE_MB)")
            return
        self.result.files.append(Found(rel, Path(path), info.st_mtime, info.st_size))


def _mb(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def scan(root: Path, *, max_bytes: int, supported: Callable[[Path], bool] = is_supported) -> ScanResult:
    """Files to index under `root` (sorted by path) and a line for each entry left out."""
    return _Walker(root, max_bytes, supported).run()


class FileChanged(OSError):
    """The file stopped being a regular file (or grew past the cap) between scan and read."""


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of `path`, refusing anything that is no longer a regular file within the cap.

    O_NONBLOCK keeps a FIFO swapped in after the scan from hanging the read; O_NOFOLLOW refuses a
    final-component symlink swapped in after the scan checked where it pointed.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not statmode.S_ISREG(info.st_mode):
            raise FileChanged(errno.EINVAL, "no longer a regular file")
        if info.st_size > max_bytes:
            raise FileChanged(errno.EFBIG, f"too big ({_mb(info.st_size)} > the {_mb(max_bytes)} cap)")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise FileChanged(errno.EFBIG, f"grew past the {_mb(max_bytes)} cap while being read")
    return data
