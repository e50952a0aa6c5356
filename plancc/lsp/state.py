"""One open plan as the server knows it: its text, the front end's result on that text,
the index of its names, and conversions between code points and the client's units."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from plancc.lsp.adapter import PlanResult
from plancc.lsp.index import Index, Point, Span, Text, build


@dataclass
class PlanState:
    uri: str
    path: Path
    version: int | None
    text: Text
    result: PlanResult
    codec: PositionCodec
    docs_url: str

    def __post_init__(self) -> None:
        self._lines = self.text.source.splitlines(True)

    @cached_property
    def index(self) -> Index | None:
        """The names of the text (None when it is not a YAML document), built on the
        first request that needs them: diagnostics are published without waiting for it."""
        return build(self.result.doc, self.text) if self.result.doc is not None else None

    def range(self, span: Span) -> lsp.Range:
        return lsp.Range(self._units(span.start), self._units(span.end))

    def _units(self, p: Point) -> lsp.Position:
        """A point in the client's units: pygls's codec counts character by character,
        an ASCII line (nearly every line of a plan) is its own count."""
        line, col = p
        if line >= len(self._lines):
            return lsp.Position(len(self._lines), 0)
        text = self._lines[line]
        if text.isascii():
            return lsp.Position(line, min(col, len(text)))
        return lsp.Position(line, self.codec.client_num_units(text[:col]))

    def point(self, position: lsp.Position) -> Point:
        p = self.codec.position_from_client_units(self._lines, position)
        return p.line, p.character

    def span(self, rng: lsp.Range) -> Span:
        return Span(self.point(rng.start), self.point(rng.end))
