"""Extract one file in a child process, so that its time and memory are bounded.

pypdf and the HTML parser bound much of their work, but not all of it: in a small PDF whose
thousands of pages all draw one content stream of half a million operators, the reader parses
that stream again for every page, each time within its own bounds. Nothing can stop a thread
that is inside the parser; a child process can be killed at a deadline and given an
address-space limit. Its text goes to a file, so it is never held twice on its way back.

Children fork from multiprocessing's fork server (`core/fork_server.py`, shared with the engine
processes), which loads the parsers once (so a child starts without importing them again), never
from the server process itself: its threads would be copied in whatever state their locks happen
to be in.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Literal

from sleuth.config import Settings
from sleuth.core.fork_server import fork_server
from sleuth.tools.local.extract import ExtractError, extract

# Loaded by the fork server before it forks anything: every child starts with them imported.
# "__main__" as in multiprocessing's default list: where the fork server is given the main
# script's path, children then skip running it again (Python 3.11's is not, so there each child
# runs it: for the server, the `sleuth` script, which imports only the CLI's entry module).
_PRELOAD = ("__main__", __name__, "sleuth.tools.extraction.html", "sleuth.tools.extraction.pdf")

# ("ok", the title) or ("refused", why); the text goes to a file, not through the pipe.
Outcome = tuple[Literal["ok", "refused"], str]


@dataclass(frozen=True)
class ExtractionLimits:
    timeout_s: float  # wall-clock time for one file, from the child's start to its result
    memory_bytes: int  # address space the child may add to what it starts with

    @classmethod
    def from_settings(cls, settings: Settings) -> ExtractionLimits:
        return cls(settings.upload_extract_timeout_s, int(settings.upload_extract_memory_mb * 1_000_000))


def extract_in_child(path: Path, name: str, text_file: Path, limits: ExtractionLimits) -> str:
    """Extract the file at `path` as a file called `name` (its type comes from the name) in a child
    process that is killed past `limits.timeout_s`; its text goes to `text_file`, its title is returned.

    ExtractError says why the file was refused: what the extractor said, the time or memory
    limit, or an unexpected failure of the parser (by exception type, in one line).
    """
    ctx = fork_server(*_PRELOAD)
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(
        target=_child,
        args=(sender, str(path), name, str(text_file), limits.memory_bytes),
        name="sleuth-extract",
        daemon=True,
    )
    child.start()
    sender.close()  # the child holds its end: if it dies, the poll below sees end-of-file at once
    try:
        if not receiver.poll(limits.timeout_s):
            raise ExtractError(f"took longer than {limits.timeout_s:g} s to extract; refused")
        try:
            outcome: Outcome = receiver.recv()
        except EOFError:
            raise ExtractError(f"the extraction stopped without a result (exit code {child.exitcode})") from None
    finally:
        receiver.close()
        if child.is_alive():
            child.kill()
        child.join()
    status, value = outcome
    if status == "refused":
        raise ExtractError(value)
    return value


def _child(sender: Connection, path: str, name: str, text_file: str, memory_bytes: int) -> None:
    _limit_memory(memory_bytes)
    outcome: Outcome
    try:
        extracted = extract(Path(name), Path(path).read_bytes())
        Path(text_file).write_text(extracted.text, encoding="utf-8", errors="surrogatepass")
        outcome = ("ok", extracted.title)
    except ExtractError as exc:
        outcome = ("refused", str(exc))
    except MemoryError:
        outcome = ("refused", f"needs more than {memory_bytes / 1_000_000:g} MB of memory to extract; refused")
    except Exception as exc:  # noqa: BLE001 — a parser bug on one odd file is that file's refusal
        outcome = ("refused", f"could not extract the text ({type(exc).__name__})")
    sender.send(outcome)
    sender.close()


def _limit_memory(memory_bytes: int) -> None:
    """Cap the address space at what this process has mapped now plus `memory_bytes`.

    Where /proc does not say what is mapped (not Linux), the time limit is the only one.
    """
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = mapped + memory_bytes
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
