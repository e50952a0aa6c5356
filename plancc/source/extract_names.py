"""The names `plancc extract` writes, each checked with the plan's own rules (PC013, the
shared namespace) and written as a YAML scalar that reads back as itself."""

from __future__ import annotations

import json
from collections.abc import Sequence

from plancc.load.scalars import INT, STR, core_tag
from plancc.source.extract_dims import Dims
from plancc.source.modules import SourceError
from plancc.source.reading import Kernel, Reading
from plancc.source.root import split_source
from plancc.source.values import FreeNames
from plancc.tables.names import MAX_NAME, identifier_problem
from plancc.text import plural


def kind_names(sources: Sequence[str], kinds: Sequence[str]) -> list[str]:
    """Each source's layer kind: ``kinds`` in order, else its function's name without
    leading underscores. SourceError (a usage error) for a count or a name that cannot be."""
    if kinds and len(kinds) != len(sources):
        raise SourceError(
            f"--kind given {plural(len(kinds), 'time')} for {plural(len(sources), 'source')}: "
            "name the kind of every source, in order, or of none"
        )
    out: list[str] = []
    for i, source in enumerate(sources):
        given = i < len(kinds)
        kind = kinds[i] if given else split_source(source)[1].lstrip("_")
        problem = identifier_problem(kind, reserved=False)
        if problem is not None:
            where = f"--kind {kind!r}" if given else source
            raise SourceError(f"{where}: layer kind {problem}; name it with --kind")
        if kind in out:
            raise SourceError(f"two sources make layer kind '{kind}': name them with --kind")
        out.append(kind)
    return out


def tensor_name(name: str, taken: set[str], dims: Dims) -> str:
    """A plan tensor's name for parameter ``name``: itself, unless the plan's name rules
    or namespace refuse it (`x_flat`, `_x`, a dim's name); then `<name>_t` (mapped back
    by `source_params`). A name no suffix can mend (longer than a name may be, or not
    ASCII: Python allows `é`) is made of its ASCII letters, digits and '_' first."""
    out = name.lstrip("_") or "t"
    if identifier_problem(out, reserved=False) is not None:
        kept = "".join(c for c in out if c.isascii() and (c.isalnum() or c == "_"))
        out = kept.lstrip("_0123456789")[: MAX_NAME // 2] or "t"
    base, n = out, 0
    while (
        identifier_problem(out, reserved=True) is not None
        or out in dims.dims
        or (out != name and out in taken)
    ):
        out = f"{out}_t" if len(out) + 2 <= MAX_NAME else f"{base[: MAX_NAME // 2]}_{n}"
        n += 1
    return out


def stage_names(kernels: list[Kernel]) -> list[str]:
    """Each kernel's stage name: its own where the plan's rules take it, else one made
    of its letters and digits, kept unique."""
    out: list[str] = []
    taken = FreeNames()
    for k in kernels:
        name = k.name
        if identifier_problem(name, reserved=False) is not None:
            name = "".join(c if c.isalnum() else "_" for c in name).lstrip("_0123456789")
            name = name if identifier_problem(name, reserved=False) is None else "stage"
        out.append(taken.take(name))
    return out


def model_name(readings: list[tuple[str, Reading]]) -> str:
    stem = readings[0][1].module.name if readings else "model"
    name = "".join(c if c.isalnum() else "_" for c in stem).lstrip("_0123456789")
    return name if name and identifier_problem(name, reserved=False) is None else "model"


def scalar(text: str, *, number: bool = False) -> str:
    """A YAML scalar: plain when it reads back as the same string (``number``: or as the
    integer it writes), else quoted."""
    plain = text and text[0].isalnum() and all(c.isalnum() or c in "_./:*+-() " for c in text)
    tag = core_tag(text)
    if (
        plain
        and ": " not in text
        and not text.endswith(":")
        and (tag == STR or (number and tag == INT))
    ):
        return text
    return json.dumps(text)
