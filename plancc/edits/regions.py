"""A fix as replacements of regions of the plan's text, for SARIF's ``fixes``: the text
edits of the one interpreter (``plancc.edits.interpret``), their offsets as 1-based
lines and columns (a line ends at LF, CRLF or CR; a column is a code point, a BOM
none), so the replacements made in order give the bytes `validate --fix` writes."""

from __future__ import annotations

from plancc.diagnostics import Pos
from plancc.edits.interpret import FixError, position, text_edits
from plancc.fixes import Fix
from plancc.load import Document


def replacements(doc: Document, fix: Fix) -> list[tuple[Pos, Pos, str]] | None:
    """``fix`` as replacements of the document's text: (start, end, text), end
    exclusive, in the text's order; None when it does not apply to the text."""
    try:
        edits = text_edits(doc, [fix])
    except FixError:
        return None
    return [(position(doc, e.start), position(doc, e.end), e.new) for e in edits]
