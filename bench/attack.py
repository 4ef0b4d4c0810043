"""Attacks on a real server's surfaces (prints one line per attack; not a test).

    .venv/bin/python bench/attack.py [--rounds 50]

Starts a scripted model whose report quotes hostile markup (images pointing at a server file, a
loopback canary and a public host; control characters) and whose clarifier answers a megabyte, then
`sleuth serve` on 127.0.0.1 with a fresh data directory, and tries as a hostile user would:

1. exports (.md, .pdf, .docx, audio) of a report with images: no image read or fetched;
2. exports and labels with control characters: no 500;
3. a 1,000,001-character clarification: capped, and not carried whole into later prompts;
4. crafted PDF uploads (deflate bomb, deep page tree, huge operator stream): refused per file, no 500;
5. eight simultaneous narration requests for one report: one job; past the limit, 429;
6. eight 19 MB uploads at once: the server's peak RSS;
7. a message racing a session delete and an upload racing a collection delete, --rounds times each;
8. a chunked 100 MB body: 413.

Each line ends in `ok` or `FAIL`; the exit code is 1 when any attack failed.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import aconnect_sse

from sleuth_testkit.model import Reply, ScriptedLLM, user_text
from sleuth_testkit.net import free_port
from sleuth_testkit.scenarios import ResearchModel

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadavg import load_average  # noqa: E402
from server import rss_kb, sample_peak, start_server  # noqa: E402

BOMB = "CLARIFY-BOMB"
BOMB_SIZE = 1_000_001
HOSTILE = "\x1b[31m\x07\x00\u202e"


@dataclass
class HostileModel(ResearchModel):
    """A model that quotes hostile markup from the pages it read, and floods the clarifier when asked."""

    canary_url: str = ""
    long_report: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clarifier(self, body: dict[str, Any]) -> Reply:
        text = user_text(body)
        if BOMB in text and "user's answer" not in text.lower():
            return Reply(text="Which version? " + "x" * BOMB_SIZE, chunk_size=65536)
        return super().clarifier(body)

    def report(self, body: dict[str, Any]) -> Reply:
        base = super().report(body).text
        quoted = (
            f"\n\nThe brochure shows ![logo](/etc/passwd) and ![c]({self.canary_url}/x.png) and "
            f"![p](https://example.com/x.png){HOSTILE} [1].\n"
        )
        padding = "\n\n".join(f"Paragraph {i} on descriptors and lookup order [1]." for i in range(600))
        return Reply(text=base + quoted + (padding if self.long_report else ""), chunk_size=4096)


class Canary:
    """A loopback HTTP server that counts the connections it receives."""

    def __init__(self) -> None:
        self.hits = 0
        canary = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                canary.hits += 1
                self.send_response(404)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


async def ask(client: httpx.AsyncClient, method: str, url: str, **kwargs: Any) -> httpx.Response:
    """The server's answer, or a 599 standing for a connection it dropped (a crash on our side)."""
    try:
        return await client.request(method, url, **kwargs)
    except httpx.TransportError as exc:
        return httpx.Response(599, text=f"{type(exc).__name__}: {exc}")


def line(number: int, name: str, detail: str, ok: bool) -> bool:
    print(f"{number}. {name}: {detail} -- {'ok' if ok else 'FAIL'}", flush=True)
    return ok


async def research(client: httpx.AsyncClient, payload: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """POST /api/research and read the run's stream to its stop: (run id, packets' objects)."""
    response = await ask(client, "POST", "/api/research", json=payload)
    response.raise_for_status()
    run_id = str(response.json()["run_id"])
    return run_id, await packets_of(client, run_id)


async def packets_of(client: httpx.AsyncClient, run_id: str) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = []
    async with aconnect_sse(client, "GET", f"/api/runs/{run_id}/events") as source:
        async for sse in source.aiter_sse():
            if sse.event == "packet":
                objs.append(json.loads(sse.data)["obj"])
                if objs[-1]["type"] == "stop":
                    break
    return objs


def report_id_of(objs: list[dict[str, Any]]) -> str:
    return str(next(o["report_id"] for o in objs if o["type"] == "report"))


async def wait_audio(client: httpx.AsyncClient, audio_id: str) -> dict[str, Any]:
    for _ in range(3000):  # another process's job, with nothing to await: bounded poll
        row: dict[str, Any] = (await ask(client, "GET", f"/api/audio/{audio_id}")).json()
        if row.get("status") != "pending":
            return row
        await asyncio.sleep(0.1)
    raise RuntimeError(f"audio {audio_id} still pending after 5 minutes")


# 1 and 2 --------------------------------------------------------------------------------------------


async def attack_exports(client: httpx.AsyncClient, canary: Canary) -> list[bool]:
    _, objs = await research(client, {"question": "What do descriptors do?", "clarify": False, "mode": "light"})
    report_id = report_id_of(objs)
    got = {ext: await ask(client, "GET", f"/api/reports/{report_id}.{ext}") for ext in ("md", "pdf", "docx")}
    audio = await ask(client, "POST", f"/api/reports/{report_id}/audio", json={"style": "narration"})
    audio_row = await wait_audio(client, audio.json()["audio_id"]) if audio.status_code < 300 else {}
    codes = {ext: r.status_code for ext, r in got.items()}
    pdf_images = b"/Subtype /Image" in got["pdf"].content
    docx = got["docx"]
    docx_media = docx.status_code == 200 and any(
        n.startswith("word/media/") for n in zipfile.ZipFile(io.BytesIO(docx.content)).namelist()
    )
    md_images = "![" in got["md"].text
    ok1 = (
        set(codes.values()) == {200}
        and canary.hits == 0
        and not pdf_images
        and not docx_media
        and not md_images
        and audio_row.get("status") == "done"
    )
    first = line(
        1,
        "report images in every export",
        f"md/pdf/docx {codes['md']}/{codes['pdf']}/{codes['docx']}, audio {audio_row.get('status')}, "
        f"canary connections {canary.hits}, PDF image objects {pdf_images}, DOCX media {docx_media}, "
        f"image syntax in .md {md_images}",
        ok1,
    )
    session = (await ask(client, "POST", "/api/sessions", json={"title": "plain"})).json()["id"]
    renamed = await ask(
        client, "PATCH", f"/api/sessions/{session}", json={"title": "bell\x07 esc\x1b nul\x00 \u202eevil"}
    )
    zero_width = await ask(client, "PATCH", f"/api/sessions/{session}", json={"title": "\u200b\u200c\u200d"})
    title = renamed.json().get("title", "") if renamed.status_code == 200 else ""
    clean = all(ch not in title for ch in "\x07\x1b\x00\u202e")
    ok2 = codes["docx"] == 200 and renamed.status_code in (200, 422) and clean and zero_width.status_code == 422
    second = line(
        2,
        "control characters in exports and titles",
        f"DOCX of a report quoting ESC/BEL/NUL {codes['docx']}, title with controls {renamed.status_code} "
        f"({title!r}), zero-width title {zero_width.status_code}",
        ok2,
    )
    return [first, second]


# 3 ---------------------------------------------------------------------------------------------------


async def attack_clarifier(client: httpx.AsyncClient, llm: ScriptedLLM) -> bool:
    run_id, objs = await research(client, {"question": f"{BOMB}: tell me about decorators", "clarify": True})
    session = (await ask(client, "GET", f"/api/runs/{run_id}")).json()["session_id"]
    stored = sum(len(q) for o in objs if o["type"] == "clarification" for q in o["questions"])
    streamed = sum(len(o.get("content", "")) for o in objs if o["type"] == "message_delta")
    before = len(llm.requests)
    answer = await ask(client, "POST", f"/api/sessions/{session}/messages", json={"content": "3.12", "mode": "light"})
    answer.raise_for_status()
    await packets_of(client, answer.json()["run_id"])
    largest = max(len(json.dumps(body)) for body in llm.requests[before:])
    ok = stored < BOMB_SIZE // 10 and streamed < BOMB_SIZE // 10 and largest < BOMB_SIZE // 5
    return line(
        3,
        "1,000,001-character clarification",
        f"clarification kept {stored:,} chars, streamed {streamed:,}; largest later model request {largest:,} bytes",
        ok,
    )


# 4 ---------------------------------------------------------------------------------------------------


def pdf_file(objects: list[bytes]) -> bytes:
    """A PDF whose object i+1 is objects[i] (object 1 is the catalog), with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def one_page(content: bytes) -> list[bytes]:
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        content,
    ]


def deflate_bomb() -> bytes:
    compressor = zlib.compressobj(9)
    block = b"0" * (1 << 20)
    data = b"".join(compressor.compress(block) for _ in range(512)) + compressor.flush()
    return pdf_file(one_page(stream(data, b"/Filter /FlateDecode")))


def deep_tree(depth: int = 101) -> bytes:
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(depth):
        number = 2 + level
        parent = b" /Parent %d 0 R" % (number - 1) if level else b""
        objects.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1%s >>" % (number + 1, parent))
    page = 2 + depth
    objects.append(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R >>" % (page - 1, page + 1))
    objects.append(stream(b"BT /F1 12 Tf (deep) Tj ET"))
    return pdf_file(objects)


def operator_flood() -> bytes:
    return pdf_file(one_page(stream(b"0 0 m 1 1 l S\n" * (15 * (1 << 20) // 14))))


async def attack_pdfs(client: httpx.AsyncClient) -> bool:
    results = []
    for name, data in (("bomb.pdf", deflate_bomb()), ("deep.pdf", deep_tree()), ("flood.pdf", operator_flood())):
        response = await ask(client, "POST", "/api/collections/hostile/documents", files={"files": (name, data)})
        results.append(f"{name} {response.status_code}")
    ok = all(not r.endswith(" 500") and not r.split()[1].startswith("2") for r in results)
    return line(4, "crafted PDF uploads", ", ".join(results), ok)


# 5 ---------------------------------------------------------------------------------------------------


def speech_processes() -> int:
    out = subprocess.run(["pgrep", "-c", "espeak"], capture_output=True, text=True).stdout.strip()
    return int(out or 0)


async def attack_audio(client: httpx.AsyncClient, model: HostileModel) -> bool:
    model.long_report = True
    reports = []
    for i in range(4):
        _, objs = await research(client, {"question": f"Long report {i} on descriptors", "clarify": False})
        reports.append(report_id_of(objs))
    model.long_report = False
    peak = [0]
    done = asyncio.Event()
    sampler = asyncio.create_task(sample_peak(speech_processes, peak, done))
    same = await asyncio.gather(
        *(ask(client, "POST", f"/api/reports/{reports[0]}/audio", json={"style": "narration"}) for _ in range(8))
    )
    ids = {r.json()["audio_id"] for r in same if r.status_code < 300}
    others = await asyncio.gather(
        *(ask(client, "POST", f"/api/reports/{rid}/audio", json={"style": s}) for rid in reports for s in ("overview",))
    )
    other_codes = Counter(r.status_code for r in others)
    rows = [await wait_audio(client, audio_id) for audio_id in ids]
    rows += [await wait_audio(client, r.json()["audio_id"]) for r in others if r.status_code < 300]
    done.set()
    await sampler
    sizes = []
    types = set()
    for row in rows:
        if row.get("url"):
            got = await ask(client, "GET", row["url"])
            sizes.append(len(got.content))
            types.add(got.headers.get("content-type", "?"))
    same_codes = Counter(r.status_code for r in same)
    ok = len(ids) == 1 and 500 not in same_codes and 500 not in other_codes and 429 in other_codes
    return line(
        5,
        "eight narrations of one report, then four other reports",
        f"same report: statuses {dict(same_codes)}, {len(ids)} job(s); other reports: statuses "
        f"{dict(other_codes)}; speech processes at once <= {peak[0]}; files {[f'{s / 1e6:.1f} MB' for s in sizes]}"
        f" {sorted(types)}",
        ok,
    )


# 6 ---------------------------------------------------------------------------------------------------


async def attack_upload_memory(client: httpx.AsyncClient, server_pid: int) -> bool:
    paragraph = b"Descriptors define __get__ and __set__; lookup finds data descriptors first.\n\n"
    data = paragraph * (19 * (1 << 20) // len(paragraph))
    idle = rss_kb(server_pid)
    peak = [idle]
    done = asyncio.Event()
    sampler = asyncio.create_task(sample_peak(lambda: rss_kb(server_pid), peak, done, every_s=0.02))
    responses = await asyncio.gather(
        *(
            ask(client, "POST", f"/api/collections/big{i}/documents", files={"files": (f"big{i}.txt", data)})
            for i in range(8)
        )
    )
    done.set()
    await sampler
    codes = Counter(r.status_code for r in responses)
    ok = 500 not in codes
    return line(
        6,
        "eight 19 MB uploads at once",
        f"statuses {dict(codes)}; server tree RSS idle {idle / 1024:.0f} MiB, peak {peak[0] / 1024:.0f} MiB "
        f"(+{(peak[0] - idle) / 1024:.0f} MiB)",
        ok,
    )


# 7 ---------------------------------------------------------------------------------------------------


async def attack_races(client: httpx.AsyncClient, rounds: int) -> bool:
    message_codes: Counter[int] = Counter()
    upload_codes: Counter[int] = Counter()
    for i in range(rounds):
        session = (await ask(client, "POST", "/api/sessions", json={"title": f"race {i}"})).json()["id"]
        posted, deleted = await asyncio.gather(
            ask(client, "POST", f"/api/sessions/{session}/messages", json={"content": "What is a descriptor?"}),
            ask(client, "DELETE", f"/api/sessions/{session}"),
        )
        message_codes.update([posted.status_code, deleted.status_code])
        if posted.status_code == 202:
            await ask(client, "POST", f"/api/runs/{posted.json()['run_id']}/cancel")
        name = f"race{i}"
        await ask(
            client, "POST", f"/api/collections/{name}/documents", files={"files": ("a.md", b"# A\n\nFirst file.\n")}
        )
        uploaded, removed = await asyncio.gather(
            ask(
                client,
                "POST",
                f"/api/collections/{name}/documents",
                files={"files": ("b.md", b"# B\n\nSecond file.\n")},
            ),
            ask(client, "DELETE", f"/api/collections/{name}"),
        )
        upload_codes.update([uploaded.status_code, removed.status_code])
    ok = 500 not in message_codes and 500 not in upload_codes
    return line(
        7,
        f"races, {rounds} rounds each",
        f"message vs session delete {dict(message_codes)}; upload vs collection delete {dict(upload_codes)}",
        ok,
    )


# 8 ---------------------------------------------------------------------------------------------------


async def chunks(total: int, size: int) -> AsyncIterator[bytes]:
    block = b"x" * size
    for _ in range(total // size):
        yield block


async def attack_chunked(client: httpx.AsyncClient) -> bool:
    response = await ask(
        client,
        "POST",
        "/api/research",
        content=chunks(100 << 20, 1 << 20),
        headers={"content-type": "application/json"},
    )
    status, body = response.status_code, response.text[:80]
    return line(8, "chunked 100 MB body, 1 MB chunks", f"{status} {body!r}", status == 413)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=50, help="rounds of each race")
    parser.add_argument("--only", type=int, action="append", help="run only this attack (repeatable)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds each attack may take")
    args = parser.parse_args()
    canary = Canary()
    model = HostileModel(canary_url=canary.url, tasks_per_cycle=[["descriptor protocol __get__ __set__"]])
    data_dir = Path(tempfile.mkdtemp(prefix="sleuth-attack-"))
    print(f"load average {load_average()}", flush=True)
    with ScriptedLLM(model) as llm:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")},
            "SLEUTH_DATA_DIR": str(data_dir),
            "SLEUTH_MODEL": "openai/scripted",
            "SLEUTH_API_BASE": llm.base_url,
            "SLEUTH_API_KEY": "sk-attack",
        }
        port = free_port()
        proc, _, _ = start_server(env, port, data_dir / "server.out", time.perf_counter())
        try:
            results: list[bool] = []
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=600) as client:
                attacks = [
                    (1, lambda: attack_exports(client, canary)),
                    (3, lambda: attack_clarifier(client, llm)),
                    (4, lambda: attack_pdfs(client)),
                    (5, lambda: attack_audio(client, model)),
                    (6, lambda: attack_upload_memory(client, proc.pid)),
                    (7, lambda: attack_races(client, args.rounds)),
                    (8, lambda: attack_chunked(client)),
                ]
                for number, attack in attacks:
                    if args.only and number not in args.only:
                        continue
                    try:
                        outcome = await asyncio.wait_for(attack(), args.timeout)
                    except TimeoutError:
                        outcome = line(number, "attack stopped", f"no answer within {args.timeout:.0f} s", False)
                    except Exception as exc:  # one broken surface must not hide the others' results
                        outcome = line(number, "attack stopped", f"{type(exc).__name__}: {exc}"[:300], False)
                    results += outcome if isinstance(outcome, list) else [outcome]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            canary.close()
    server_errors = (data_dir / "server.out").read_text(errors="replace").count("Traceback")
    results.append(line(9, "server log", f"{server_errors} tracebacks", server_errors == 0))
    print(f"load average {load_average()}; {sum(results)} of {len(results)} ok", flush=True)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
