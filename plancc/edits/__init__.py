"""Fixes applied: ``plancc.fixes`` (the data every rule builds) turned into edits of a plan's
text, for ``validate --fix``/``--diff``, SARIF, the editor and ``suggest --fix``."""
