"""Decode one string field of a JSON object while its text is still arriving in fragments.

Used to stream `think_tool`'s `reasoning` argument to clients as plain text: the JSON
wrapper is stripped and escapes are decoded, even when a fragment ends mid-escape.
"""

from __future__ import annotations

import json
import re


class StreamingStringField:
    """Feed JSON fragments; get back newly decoded text of the first string value."""

    def __init__(self) -> None:
        self._buffer = ""
        self._start: int | None = None  # index just after the opening quote of the value
        self._pos = 0
        self._done = False

    def feed(self, fragment: str) -> str:
        if self._done:
            return ""
        self._buffer += fragment
        if self._start is None:
            match = re.search(r'\{\s*"[^"\\]*"\s*:\s*"', self._buffer)
            if not match:
                return ""
            self._start = self._pos = match.end()
        out: list[str] = []
        buf = self._buffer
        i = self._pos
        while i < len(buf):
            char = buf[i]
            if char == '"':
                self._done = True
                i += 1
                break
            if char != "\\":
                out.append(char)
                i += 1
                continue
            if i + 1 >= len(buf):
                break  # wait for the rest of the escape
            if buf[i + 1] == "u":
                if i + 6 > len(buf):
                    break
                code = buf[i : i + 6]
                # a surrogate pair needs the second half before it can be decoded
                if 0xD800 <= int(code[2:], 16) <= 0xDBFF:
                    if i + 12 > len(buf):
                        break
                    code = buf[i : i + 12]
                try:
                    out.append(json.loads(f'"{code}"'))
                except json.JSONDecodeError:
                    out.append(code)
                i += len(code)
                continue
            try:
                out.append(json.loads(f'"{buf[i : i + 2]}"'))
            except json.JSONDecodeError:
                out.append(buf[i + 1])
            i += 2
        self._pos = i
        return "".join(out)
