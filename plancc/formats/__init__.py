"""Output formats, by name: each is one module defining ``FORMAT``, listed here.

Adding a format: a module in this package with its ``FORMAT``, its entry in
``FORMATS``, and its name in ``plancc.cli.commands.Format`` (the command line's choices,
kept free of imports for cold start; tests/test_architecture.py checks the two agree).
"""

from __future__ import annotations

from plancc.formats import github, json, sarif, text
from plancc.formats.base import Options, OutputFormat

FORMATS: dict[str, OutputFormat] = {
    f.name: f for f in (text.FORMAT, json.FORMAT, github.FORMAT, sarif.FORMAT)
}

__all__ = ["FORMATS", "Options", "OutputFormat"]
