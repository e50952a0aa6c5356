"""One open plan as the server knows it: its text, the front end's result on that text,
the index of its names, and conversions between code points and the client's units."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition, ServerTextRange

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
        return self.codec.range_to_client_units(
            self._lines,
            ServerTextRange(ServerTextPosition(*span.start), ServerTextPosition(*span.end)),
        )

    def point(self, position: lsp.Position) -> Point:
        p = self.codec.position_from_client_units(self._lines, position)
        return p.line, p.character

    def span(self, rng: lsp.Range) -> Span:
        return Span(self.point(rng.start), self.point(rng.end))
