"""A canary on 127.0.0.1: a TCP server that answers any HTTP request with a PNG and counts every
connection made to it, so a test can assert that nothing reached for a URL pointing at it."""

from __future__ import annotations

import base64
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# A valid 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@dataclass
class Canary:
    url: str
    connections: list[tuple[str, int]] = field(default_factory=list)


@contextmanager
def canary() -> Iterator[Canary]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.05)  # how often the accept loop looks at `stop`
    bird = Canary(f"http://127.0.0.1:{listener.getsockname()[1]}")
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, peer = listener.accept()
            except TimeoutError:
                continue
            bird.connections.append(peer)
            with conn:
                conn.settimeout(1)
                try:
                    conn.recv(65536)
                    head = f"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: {len(PNG)}\r\n\r\n"
                    conn.sendall(head.encode() + PNG)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield bird
    finally:
        stop.set()
        thread.join(5)
        listener.close()
