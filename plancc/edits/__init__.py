"""Fixes made on a plan's text: ``plancc.fixes`` (the data every rule builds) turned into
the few text edits each makes, by one interpreter for every output.

The entry points: ``interpret.apply_fixes(doc, fixes)`` (a loaded plan's bytes with
the fixes made: what `validate --fix` and `suggest --fix` write), ``interpret.text_edits``
(the edits themselves: the editor's and, through ``regions``, SARIF's), and
``apply.fix_loop`` (fixes applied one a pass, the plan checked again after each:
`validate --fix`, `--diff` and the editor's "fix all")."""
