"""The pipe to an engine on a thread behaves as the pipe to an engine process does."""

from __future__ import annotations

import threading

import pytest

from sleuth.runs.pipes import thread_pipe


def test_a_message_arrives_as_a_copy_in_order() -> None:
    server, engine = thread_pipe()
    request = {"question": "q", "sources": ["a"]}
    server.send(("start", "r_1", request))
    server.send(("cancel", "r_1"))
    received = engine.recv()
    assert received == ("start", "r_1", request) and received[2] is not request
    assert engine.recv() == ("cancel", "r_1")


def test_what_cannot_cross_to_a_process_cannot_cross_here() -> None:
    server, _ = thread_pipe()
    with pytest.raises(Exception, match="pickle"):
        server.send(("start", "r_1", threading.Lock()))


def test_closing_one_end_ends_a_blocked_read_every_later_read_and_every_send() -> None:
    server, engine = thread_pipe()
    ended: list[BaseException] = []

    def read() -> None:  # as the server's reader thread waits for the engine's next message
        try:
            server.recv()
        except EOFError as exc:
            ended.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    engine.close()  # the engine thread returned
    reader.join(30)
    assert not reader.is_alive() and len(ended) == 1
    for end in (server, engine):
        with pytest.raises(EOFError):
            end.recv()
        with pytest.raises(BrokenPipeError):
            end.send(("shutdown",))
