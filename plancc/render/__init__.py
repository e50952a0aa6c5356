"""Stage 5, render: a resolved plan -> the text of its PyPTO module and its runtime manifest.

Decisions are made here, in Python: which constants the module defines, each
warm function's parameters, flat views, docstring facts and the manifest's
numbers. Layout lives in ``templates/module.py.j2``, which writes every
statement on one line in exactly the form of the PyPTO facts. A last pass
(:func:`fit_lines`) breaks the statements that are longer than
:data:`LINE_LENGTH` (ruff's default), and a bracket it breaks always opens onto
one item per line ending in a magic trailing comma, which ruff keeps at every
line length. So the output passes ``ruff format --check`` and ``ruff check``
with ruff's defaults, and ``ruff format --check`` at any longer line length
too, with one exception: a single dim expression too long for a line of its
own (longer than about 75 characters, from long names) is broken at its
operators as ruff breaks it at 88, and ruff joins it again at a line length
where it fits. The call example in each function's docstring is prose: one
line whatever its length (ruff's default rules do not include E501).

Every string that reaches the module is emitted as a Python literal or
escaped for a docstring; identifiers come only from names the front end has
validated. jinja2 is imported lazily: ``validate`` never loads it.

The parts: ``module_view`` (the module's constants and warm functions, and the
template), ``manifest_json`` (the runtime manifest) and ``fit`` (the line-fitter).
"""

from __future__ import annotations

from plancc import ir
from plancc.facts import Facts
from plancc.render.fit import LINE_LENGTH, fit_lines
from plancc.render.manifest_json import manifest, render_manifest
from plancc.render.module_view import doc_escape, py_str, render_module
from plancc.tables.outputs import MANIFEST_FORMAT, manifest_file, module_file

__all__ = [
    "LINE_LENGTH",
    "MANIFEST_FORMAT",
    "doc_escape",
    "fit_lines",
    "manifest",
    "manifest_file",
    "module_file",
    "py_str",
    "render",
    "render_manifest",
    "render_module",
]


def render(
    plan: ir.Plan,
    plan_path: str,
    *,
    facts: Facts,
    piped: bool = False,
    config: tuple[str, str] | None = None,
) -> dict[str, str]:
    """File name -> content of every output of one plan.

    ``plan_path`` is the plan file's path relative to the output directory, in
    POSIX form: it is written into both files, so it must not depend on the
    machine or the working directory. ``piped``: the plan was read from standard
    input or a pipe. ``config``: the config file's path (as ``plan_path``) and SHA-256.
    ``facts``: the check's (``plancc.check.Checked.facts``): the consumers both files
    name, the manifest's numbers.
    """
    module = render_module(plan, plan_path, facts, piped=piped)
    return {
        module_file(plan.model): module,
        manifest_file(plan.model): render_manifest(plan, plan_path, facts, config, module),
    }
