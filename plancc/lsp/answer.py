"""A request's answer as JSON, made in the request thread and written as it is.

pygls would convert and encode an answer on the event loop (130 ms for the
outline of 1,000 warms); here the request thread encodes it, in pieces with a
pause between them (the server's: it waits while a change awaits its
diagnostics), and the loop only writes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pygls.protocol import LanguageServerProtocol


class Answer:
    """A request's answer already encoded as JSON, in the request thread: pygls would
    otherwise convert and encode it on the event loop (130 ms for the outline of 1,000
    warms), and the loop now only writes it."""

    __slots__ = ("json",)

    def __init__(self, value: object, pause: Callable[[], object] = lambda: None) -> None:
        self.json = encode(value, pause)

    @classmethod
    def of_json(cls, text: str) -> Answer:
        """An answer its request made as JSON text (ASCII) itself: the outline."""
        answer = cls.__new__(cls)
        answer.json = text
        return answer


def encode(value: object, pause: Callable[[], object]) -> str:
    """``value`` as compact JSON, ASCII (its length is its size in bytes), with ``pause()``
    between pieces: one call of ``json.dumps`` holds the interpreter until it returns
    (15 ms for the outline of 1,000 warms), so a list is encoded a slice of leaves (items
    holding no list) at a time, and an item holding a list on its own, the same way."""
    if isinstance(value, dict) and _branches(value) and all(type(k) is str for k in value):
        entries = (f"{to_json(k)}:{encode(v, pause)}" for k, v in value.items())
        return f"{{{','.join(entries)}}}"
    if not isinstance(value, list):
        return to_json(value)
    parts: list[str] = []
    leaves: list[object] = []
    for item in value:
        if isinstance(item, list) or (isinstance(item, dict) and _branches(item)):
            if leaves:
                parts.append(to_json(leaves)[1:-1])
                leaves = []
            pause()
            parts.append(encode(item, pause))
            continue
        leaves.append(item)
        if len(leaves) == _SLICE:
            pause()
            parts.append(to_json(leaves)[1:-1])
            leaves = []
    if leaves:
        parts.append(to_json(leaves)[1:-1])
    return f"[{','.join(parts)}]"


def _branches(entries: dict[Any, Any]) -> bool:
    return any(isinstance(v, list) for v in entries.values())


_SLICE = 100  # leaves encoded in one call: about 20 kB of outline, a tenth of a millisecond
# One encoder for every call: ``json.dumps`` with options makes a new one each time.
to_json = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


class Protocol(LanguageServerProtocol):
    """pygls's protocol, writing an ``Answer`` as it is."""

    def _send_data(self, data: Any) -> None:
        answer = getattr(data, "result", None)
        if not isinstance(answer, Answer) or self.writer is None:
            super()._send_data(data)
            return
        body = f'{{"jsonrpc":"2.0","id":{json.dumps(data.id)},"result":{answer.json}}}'
        header = f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; "
        self.writer.write(f"{header}charset={self.CHARSET}\r\n\r\n{body}".encode())
