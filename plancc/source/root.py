"""Where a plan's `source` paths start, and PC200 when nothing is there.

Apart from the reader and the checks (``checks``) so that a plan whose model code
is absent (plancc's own CI, any machine without the checkout) pays for one
directory test, not for importing the reader.
"""

from __future__ import annotations

import os
from typing import Final

from plancc import codes, ir
from plancc.diagnostics import Diagnostic, diag
from plancc.usage import UsageError
from plancc.validate import Validated

# The `source_root` override that means `--no-source` (the source checks skipped on
# purpose): no directory has an empty name, and the command line refuses an explicit
# `--source-root ''` as no directory before any plan is read.
NO_SOURCE: Final = ""


def source_setting(source_root: str | None, no_source: bool) -> str | None:
    """The source root the API takes from the command line: `--no-source`, or
    `--source-root` (a directory, else a usage error: nothing would be checked), or None
    (each plan's own `source_root`)."""
    if no_source:
        if source_root is not None:
            raise UsageError("--no-source: not with --source-root")
        return NO_SOURCE
    if source_root is not None and not os.path.isdir(source_root):
        raise UsageError(f"--source-root {source_root}: not a directory")
    return source_root


def split_source(source: str) -> tuple[str, str]:
    """A `source` value's path and function: `PATH:FUNCTION`."""
    path, _, function = source.rpartition(":")
    return path, function


def source_root(plan_file: str, declared: str | None, override: str | None) -> str:
    """Where the `source` paths start: ``--source-root``, else `source_root` relative to the
    plan's directory, else that directory."""
    if override is not None:
        return os.path.abspath(override)
    base = os.path.dirname(os.path.abspath(plan_file)) if plan_file != "-" else os.getcwd()
    return os.path.normpath(os.path.join(base, declared or "."))


def unchecked(
    v: Validated, plan: ir.Plan, override: str | None
) -> list[tuple[Diagnostic, tuple[ir.Warm, ...]]] | None:
    """What the source checks of ``plan`` find when they cannot read anything: nothing for
    a plan without `source`, PC200 when the root is no directory; None when there is
    model code to read (then ``checks.check_sources`` reads it)."""
    model = v.plan
    kinds = [] if model is None else [k for k, layer in model.layers.items() if layer.source]
    if model is None or not kinds:
        return []
    if override == NO_SOURCE:
        d = diag(
            plan.file,
            v.at("layers", kinds[0], "source"),
            codes.SOURCE_UNRESOLVED,
            f"the sources of {', '.join(kinds)} were not read (--no-source): the source "
            "checks are skipped",
        )
        return [(d, ())]
    resolved = source_root(plan.file, model.source_root, override)
    if checkout_at(resolved):
        return None
    given = (
        f"--source-root {override}"
        if override is not None
        else f"source_root '{model.source_root or '.'}'"
    )
    where = (
        v.at("source_root")
        if model.source_root is not None and override is None
        else v.at("layers", kinds[0], "source")
    )
    d = diag(
        plan.file,
        where,
        codes.SOURCE_UNCHECKED,
        f"{given} is not a directory ({_shown(resolved)}): the sources of {', '.join(kinds)} were "
        "not checked",
        "check out the model repository there, pass --source-root DIR, or skip the source "
        "checks with --no-source",
    )
    return [(d, ())]


def _shown(path: str) -> str:
    """``path`` as the user can find it: relative to the current directory."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return path


def checkout_at(path: str) -> bool:
    """Whether model code may be at ``path`` (a directory)."""
    return os.path.isdir(path)
