"""Names: what may reach generated code, and "did you mean" suggestions."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable

from plancc.tables.dtypes import DTYPES
from plancc.tables.platforms import PLATFORMS as _PLATFORM_TABLE
from plancc.text import clip

KEYWORDS = frozenset(keyword.kwlist)
PLATFORMS = tuple(_PLATFORM_TABLE)
# Names the generated module defines itself (docs/build.md, "The generated module"): a dim,
# tensor or warm so named would shadow or be shadowed by them.
RESERVED = frozenset({"pl", "after", "warm_ctx"})
RESERVED_SUFFIX = "_flat"
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# Long enough for any real name; short enough that `<model>_warms.manifest.json` and the
# generated functions stay well within a file system's 255-byte names.
MAX_NAME = 100


# Float types PyPTO does not have, named so the hint can say so.
_NO_DTYPE = frozenset({"float64", "double", "fp64", "f64", "complex64", "complex128"})


def dtype_hint(name: str) -> str:
    """What an unknown dtype is called in PyPTO: ``float32`` is fp32, ``fp8`` one of two."""
    key = name.strip().lower().removeprefix("torch.").removeprefix("np.").removeprefix("pl.")
    if key in DTYPES and key != name:
        return f"dtypes are lower case: '{key}'"
    known = [d.name for d in DTYPES.values() if key in d.aliases]
    if known:
        return "PyPTO calls it " + " or ".join(f"'{d}'" for d in known)
    if key in _NO_DTYPE:
        return f"PyPTO has no such dtype; dtypes: {' '.join(DTYPES)}"
    return suggest(name, DTYPES) or f"dtypes: {' '.join(DTYPES)}"


def identifier_problem(name: str, *, reserved: bool, private: bool = False) -> str | None:
    """Why ``name`` cannot be a name in generated code, or None when it can. ``private``:
    a variable of the model code (a stage's `task`), which may start with '_'."""
    if len(name) > MAX_NAME:
        return f"'{clip(name)}' is {len(name):,} characters long; a name has at most {MAX_NAME}"
    if name.startswith("_"):
        bare = name.lstrip("_")
        if not private:
            return f"'{name}' starts with '_'"
        if not bare:
            return f"'{name}' is only underscores"
        if not _IDENT.fullmatch(bare):  # said whole: the nested wording passes 100 characters
            rule = "leading '_', a letter, then letters, digits and '_'"
            return f"'{name}' is not an identifier: {rule}"
        problem = identifier_problem(bare, reserved=reserved)
        return None if problem is None else f"'{name}' without its leading '_': {problem}"
    if not _IDENT.fullmatch(name):
        return f"'{name}' is not an identifier (letters, digits and '_', starting with a letter)"
    if name in KEYWORDS:
        return f"'{name}' is a Python keyword"
    if reserved and (name in RESERVED or name.endswith(RESERVED_SUFFIX)):
        return f"'{name}' is reserved by the generated module (pl, after, warm_ctx, *_flat)"
    return None


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """A hint naming the closest candidate, if any is close."""
    close = closest(name, candidates)
    return f"did you mean '{close}'?" if close else None


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``name``, if any is close."""
    pool = sorted(set(candidates))
    import difflib  # noqa: PLC0415 (cold start: only when a name is unknown)

    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in pool}
        if name.lower() in lowered:
            close = [lowered[name.lower()]]
    return close[0] if close else None
