"""One open plan as the server knows it: its text, the front end's result on that text
(``analyse``), the index of its names, and conversions between code points and the
client's units."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from lsprotocol import types as lsp
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec

from plancc.lsp import adapter as pc
from plancc.lsp.adapter import PlanResult, check_text
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
    # Another text of this document checked as this one was ("fix all" checks each pass).
    recheck: Callable[[str], PlanResult] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._lines = pc.split_lines(self.text.source)  # LSP's lines: at LF, CRLF, CR only

    @cached_property
    def index(self) -> Index | None:
        """The names of the text (None when it is not a YAML document), built on the
        first request that needs them: diagnostics are published without waiting for it."""
        doc = self.result.doc
        return Index(self.text, doc, self.pause) if doc is not None else None

    @cached_property
    def fixed(self) -> pc.Fixed | None:
        """The text with every safe fix applied, as `validate --fix` applies them (its
        loop: one fix, then the check again), for "fix all"; worked out once per text,
        on the first request that offers it. None without a safe fix."""
        recheck, doc = self.recheck, self.result.doc
        if recheck is None or doc is None:
            return None
        if not any(d.fix is not None and d.fix.safe for d in self.result.diagnostics):
            return None

        def check(data: bytes) -> PlanResult:
            return self.result if data == doc.raw else recheck(data.decode("utf-8"))

        return pc.fix_loop(str(self.path), doc.raw, check)

    def range(self, span: Span) -> lsp.Range:
        return lsp.Range(
            lsp.Position(*self._units(span.start)), lsp.Position(*self._units(span.end))
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


def analyse(
    uri: str,
    version: int | None,
    source: str,
    unsaved: dict[Path, str],
    *,
    codec: PositionCodec,
    docs_url: str,
    pause: Callable[[], object] = lambda: None,
    source_root: str | None = None,
    seconds: float | None = None,
) -> PlanState:
    """Check one buffer's text: what every feature reads (``pause``: PlanState's;
    ``source_root`` as `--source-root`; ``seconds``: the bound of its model code's
    reading)."""
    path = path_of(uri)

    def recheck(text: str) -> PlanResult:
        return check_text(path, text, unsaved, source_root=source_root, seconds=seconds)

    result = recheck(source)
    return PlanState(uri, path, version, Text(source), result, codec, docs_url, pause, recheck)


def path_of(uri: str) -> Path:
    """The file system path of a ``file:`` URI (any other scheme: a name in the cwd)."""
    fs = to_fs_path(uri)
    return Path(fs) if fs else Path(os.getcwd()) / uri.rsplit("/", 1)[-1]
