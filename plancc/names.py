"""Names and dtypes: what may reach generated code, and "did you mean" suggestions."""

from __future__ import annotations

import difflib
import keyword
import re
from collections.abc import Iterable
from dataclasses import dataclass

from plancc.diagnostics import clip
from plancc.platforms import PLATFORMS as _PLATFORM_TABLE

KEYWORDS = frozenset(keyword.kwlist)
PLATFORMS = tuple(_PLATFORM_TABLE)
# Names the generated module defines itself (see docs/pypto-facts): a dim,
# tensor or warm so named would shadow or be shadowed by them.
RESERVED = frozenset({"pl", "after", "warm_ctx"})
RESERVED_SUFFIX = "_flat"
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# Long enough for any real name; short enough that `<model>_warms.manifest.json` and the
# generated functions stay well within a file system's 255-byte names.
MAX_NAME = 100


@dataclass(frozen=True)
class DType:
    name: str
    pl_name: str
    bits: int


def _dtype(name: str, bits: int) -> DType:
    return DType(name, name.upper(), bits)


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        _dtype("bf16", 16),
        _dtype("fp16", 16),
        _dtype("fp32", 32),
        _dtype("fp8e4m3fn", 8),
        _dtype("fp8e5m2", 8),
        _dtype("fp8e8m0", 8),
        _dtype("hf8", 8),
        _dtype("fp4", 4),
        _dtype("hf4", 4),
        _dtype("int4", 4),
        _dtype("uint4", 4),
        _dtype("int8", 8),
        _dtype("uint8", 8),
        _dtype("int16", 16),
        _dtype("uint16", 16),
        _dtype("int32", 32),
        _dtype("uint32", 32),
        _dtype("int64", 64),
        _dtype("uint64", 64),
        _dtype("bool", 8),
    )
}


# Other frameworks' spellings of PyPTO dtypes (torch, numpy, ml_dtypes, short forms).
_DTYPE_ALIASES: dict[str, tuple[str, ...]] = {
    "float32": ("fp32",),
    "float": ("fp32",),
    "f32": ("fp32",),
    "single": ("fp32",),
    "float16": ("fp16",),
    "half": ("fp16",),
    "f16": ("fp16",),
    "bfloat16": ("bf16",),
    "bfloat": ("bf16",),
    "fp8": ("fp8e4m3fn", "fp8e5m2"),
    "float8": ("fp8e4m3fn", "fp8e5m2"),
    "float8_e4m3fn": ("fp8e4m3fn",),
    "float8_e4m3": ("fp8e4m3fn",),
    "e4m3": ("fp8e4m3fn",),
    "float8_e5m2": ("fp8e5m2",),
    "e5m2": ("fp8e5m2",),
    "float8_e8m0fnu": ("fp8e8m0",),
    "float8_e8m0": ("fp8e8m0",),
    "e8m0": ("fp8e8m0",),
    "float4": ("fp4",),
    "float4_e2m1fn": ("fp4",),
    "i8": ("int8",),
    "u8": ("uint8",),
    "i16": ("int16",),
    "u16": ("uint16",),
    "i32": ("int32",),
    "u32": ("uint32",),
    "int": ("int32",),
    "i64": ("int64",),
    "u64": ("uint64",),
    "long": ("int64",),
    "boolean": ("bool",),
}
_NO_DTYPE = {"float64", "double", "fp64", "f64", "complex64", "complex128"}


def dtype_hint(name: str) -> str:
    """What an unknown dtype is called in PyPTO: ``float32`` is fp32, ``fp8`` one of two."""
    key = name.strip().lower().removeprefix("torch.").removeprefix("np.").removeprefix("pl.")
    if key in DTYPES and key != name:
        return f"dtypes are lower case: '{key}'"
    known = _DTYPE_ALIASES.get(key)
    if known:
        return "PyPTO calls it " + " or ".join(f"'{d}'" for d in known)
    if key in _NO_DTYPE:
        return f"PyPTO has no such dtype; dtypes: {' '.join(DTYPES)}"
    return suggest(name, DTYPES) or f"dtypes: {' '.join(DTYPES)}"


def identifier_problem(name: str, *, reserved: bool) -> str | None:
    """Why ``name`` cannot be a name in generated code, or None when it can."""
    if len(name) > MAX_NAME:
        return f"'{clip(name)}' is {len(name):,} characters long; a name has at most {MAX_NAME}"
    if name.startswith("_"):
        return f"'{name}' starts with '_'"
    if not _IDENT.fullmatch(name):
        return f"'{name}' is not an identifier (letters, digits and '_', starting with a letter)"
    if name in KEYWORDS:
        return f"'{name}' is a Python keyword"
    if reserved and (name in RESERVED or name.endswith(RESERVED_SUFFIX)):
        return f"'{name}' is reserved by the generated module (pl, after, warm_ctx, *_flat)"
    return None


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """A hint naming the closest candidate, if any is close."""
    pool = sorted(set(candidates))
    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in pool}
        if name.lower() in lowered:
            close = [lowered[name.lower()]]
    return f"did you mean '{close[0]}'?" if close else None
