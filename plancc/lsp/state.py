"""One open plan as the server knows it: its text, the front end's result on that text,
the index of its names, and conversions between code points and the client's units."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from plancc.lsp.adapter import PlanResult
from plancc.lsp.index import Index, Point, Span, Text


@dataclass
class PlanState:
    uri: str
    path: Path
    version: int | None
    text: Text
    result: PlanResult
    codec: PositionCodec
    docs_url: str
    # Called between the items of a long answer (symbols, hints, the names' walk): the
    # server's gives way to a running check, once per request (``PlanServer.pause``).
    pause: Callable[[], object] = field(default=lambda: None, repr=False)

    def __post_init__(self) -> None:
        self._lines = self.text.source.splitlines(True)

    @cached_property
    def index(self) -> Index | None:
        """The names of the text (None when it is not a YAML document), built on the
        first request that needs them: diagnostics are published without waiting for it."""
        doc = self.result.doc
        return Index(self.text, doc, self.pause) if doc is not None else None

    def range(self, span: Span) -> lsp.Range:
        return lsp.Range(
            lsp.Position(*self._units(span.start)), lsp.Position(*self._units(span.end))
        )

    def json_range(self, span: Span) -> str:
        """``range`` as JSON text (for an answer made as JSON: the outline)."""
        (l0, c0), (l1, c1) = self._units(span.start), self._units(span.end)
        return (
            f'{{"start":{{"line":{l0},"character":{c0}}},"end":{{"line":{l1},"character":{c1}}}}}'
        )

    def _units(self, p: Point) -> Point:
        """A point in the client's units: pygls's codec counts character by character,
        an ASCII line (nearly every line of a plan) is its own count."""
        line, col = p
        if line >= len(self._lines):
            return len(self._lines), 0
        text = self._lines[line]
        if text.isascii():
            return line, min(col, len(text))
        return line, self.codec.client_num_units(text[:col])

    def point(self, position: lsp.Position) -> Point:
        p = self.codec.position_from_client_units(self._lines, position)
        return p.line, p.character

    def span(self, rng: lsp.Range) -> Span:
        return Span(self.point(rng.start), self.point(rng.end))
