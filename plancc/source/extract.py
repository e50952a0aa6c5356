"""`plancc extract PATH:FUNCTION…`: the plan skeleton of model code, in `plancc fmt`'s layout.

Each source is one layer kind: its tensors are the function's annotated tensor
parameters (dims from the module constants they use; a constant bound to the
model config, `D = M.hidden_size`, is written as the config key when `--config`
names a JSON file that has it), its stages are its kernels in program order
(`kernel`, the `task` the layer function binds for it, the tensors it reads,
and `deps`: the stages it waits for, transitively reduced), and its warms are
the `async_prefetch` scopes and generated-warm calls already in the code. A
parameter of one name that two layer kinds annotate differently becomes
`<kind>_<name>`, mapped back by the kind's `source_params`. What the reader
could not resolve is left out and named (PC208), never guessed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType

from plancc.fmt.layout import Layout
from plancc.load import ConfigError, read_config_at
from plancc.source import collectives
from plancc.source.extract_dims import Dims, stacked
from plancc.source.extract_names import (
    kind_names,
    model_name,
    scalar,
    stage_names,
    tensor_name,
)
from plancc.source.extract_warms import Written, warms
from plancc.source.modules import SourceError
from plancc.source.reader import Reader
from plancc.source.reading import Kernel, Reading
from plancc.source.resolver import Resolver
from plancc.source.root import split_source
from plancc.source.runs import Runs, stage_runs
from plancc.source.values import int_or_none
from plancc.tables.dtypes import DTYPES
from plancc.tables.names import identifier_problem
from plancc.usage import UsageError


@dataclass
class Extracted:
    text: str
    notices: list[str] = field(default_factory=list)
    refused: str = ""  # why there is no skeleton (exit 1), one line

    @property
    def stderr(self) -> list[str]:
        if self.refused:
            return [f"plancc: {self.refused}"]
        return [f"notice PC208: {n}" for n in self.notices]

    @property
    def exit_code(self) -> int:
        return 1 if self.refused else 0


def run(
    sources: Sequence[str], kinds: Sequence[str], config: str | None, defines: Sequence[str]
) -> Extracted:
    """`plancc extract`: the skeleton, or the one line refusing it; UsageError for
    arguments or files that cannot be read."""
    try:
        return extract(sources, kinds, config, defines=parse_defines(defines))
    except Refused as exc:
        return Extracted("", refused=str(exc))
    except SourceError as exc:
        raise UsageError(str(exc)) from None


_NAME = re.compile(r"[A-Za-z_]\w*")  # a name in a dim expression
MAX_DIGITS = 4300  # an integer's digits, Python's default int_max_str_digits


def parse_defines(given: Sequence[str]) -> dict[str, object]:
    """`--define NAME=VALUE`: an integer, `true`/`false`, else the string."""
    out: dict[str, object] = {}
    for item in given:
        name, eq, text = item.partition("=")
        if not eq or not name.isidentifier():
            raise SourceError(f"--define {item}: not NAME=VALUE")
        value: object = text
        digits = text.removeprefix("-")
        if digits.isascii() and digits.isdigit():  # not '²', which isdigit() takes too
            if len(digits) > MAX_DIGITS:  # int() refuses it: Python's conversion limit
                raise SourceError(f"--define {name}: an integer of more than 4,300 digits")
            value = int(text)
        elif text in ("true", "false"):
            value = text == "true"
        out[name] = value
    return out


class Refused(SourceError):
    """The function gives no skeleton that keeps the promise (no kernels): exit 1, one line."""


def extract(  # noqa: C901, PLR0912, PLR0915 (the skeleton written key by key in fmt order)
    sources: Sequence[str],
    kinds: Sequence[str] = (),
    config: str | None = None,
    model: str | None = None,
    *,
    defines: Mapping[str, object] = MappingProxyType({}),
) -> Extracted:
    """The plan skeleton of ``sources`` (each `PATH:FUNCTION`; a layer kind each, named by
    ``kinds`` in order or after the function). SourceError when one cannot be read (or
    the arguments cannot be), Refused when one has no kernel."""
    config_keys: dict[str, int] = {}
    if config is not None:
        config_keys = _config(config)
    for source in sources:
        path, function = split_source(source)
        if not path or not function.isidentifier():
            raise SourceError(f"{source}: not PATH:FUNCTION (a Python file and a function in it)")
    kinds_of = kind_names(sources, kinds)
    paths = [os.path.abspath(split_source(s)[0]) for s in sources]
    root = os.path.commonpath([os.path.dirname(p) for p in paths]) if paths else "."
    resolver = Resolver(root)  # one for all sources: each module is read once
    resolver.defines = defines
    readings: list[tuple[str, Reading]] = []
    for source, path, kind in zip(sources, paths, kinds_of, strict=True):
        function = split_source(source)[1]
        reading = Reader(resolver).read(path, function)
        if not any(k.name and not k.opaque for k in reading.kernels):
            what = "no kernel it runs is resolved statically" if reading.kernels else "no kernel"
            raise Refused(
                f"{source}: {function}() has {what} (no pl.at or pl.spmd scope with a "
                "name_hint): there is no plan skeleton to write"
            )
        readings.append((kind, reading))
    read_notes = len(resolver.notes)  # those after it are the dims' own
    dims = Dims(resolver, config_keys)
    notices: list[str] = []
    # Tensors: each parameter once, or once per kind where the kinds disagree.
    seen: dict[str, tuple[list[str], str]] = {}
    clash: set[str] = set()
    lasts: dict[tuple[str, str], int] = {}  # a parameter's last dim, where it is a constant
    stacks: dict[tuple[str, str], str] = {}  # a stacked parameter's layer index
    dynamic: set[tuple[str, str]] = set()  # a parameter with a dim written `dynamic`
    per_kind: dict[str, dict[str, tuple[list[str], str]]] = {}
    for kind, reading in readings:
        mine: dict[str, tuple[list[str], str]] = {}
        for p in reading.params.values():
            if not p.tensor:
                continue
            if p.unknown_shape:
                notices.append(
                    f"{reading.file}:{p.line}: parameter '{p.name}' is a bare pl.Tensor whose "
                    "shape no caller annotates: left out"
                )
                continue
            if p.dtype not in DTYPES:
                notices.append(f"{reading.file}:{p.line}: parameter '{p.name}': dtype not read")
                continue
            if not p.name.isascii():  # Python allows `é`; `source_params` cannot map it
                notices.append(f"{reading.file}:{p.line}: parameter '{p.name}': not ASCII")
                continue
            mod = p.module or reading.module
            stack = stacked(reading, mod, p.dims, dims)
            shape = [dims.expr(mod, d) for d in p.dims[1 if stack else 0 :]]
            if stack:  # its slab; the stack goes with the dtype: `bf16, stacked: {…}`
                shape.insert(0, stack[1])
                stacks[(kind, p.name)] = stack[2]
            if any(dims.dims.get(n) == "dynamic" for d in shape for n in _NAME.findall(d)):
                dynamic.add((kind, p.name))
            mine[p.name] = (shape, p.dtype + (stack[0] if stack else ""))
            last = int_or_none(resolver.const(mod, p.dims[-1])) if p.dims else None
            if last is not None and last > 0:
                lasts[(kind, p.name)] = last
            if p.name in seen and seen[p.name] != mine[p.name]:
                clash.add(p.name)
            seen.setdefault(p.name, mine[p.name])
        per_kind[kind] = mine
    if not any(per_kind.values()):
        raise Refused(
            f"{', '.join(sources)}: no tensor parameter has a shape that is known (a bare "
            "pl.Tensor no caller annotates, say): there is no plan skeleton to write"
        )
    lines = [
        f"# Extracted by plancc extract from {', '.join(sources)}.",
        "plancc: 1",
        f"model: {scalar(model or model_name(readings))}",
        "platform: a2a3",
    ]
    if config is not None:
        lines.append(f"config: {scalar(config)}")
    rel_root = os.path.relpath(root)
    lines.append(f"source_root: {scalar(rel_root.replace(os.sep, '/'))}")
    if defines:  # the choices the skeleton was read with: its checks read the code so
        given = ", ".join(
            f"{k}: {scalar(v) if isinstance(v, str) else json.dumps(v)}" for k, v in defines.items()
        )
        lines.append(f"source_defines: {{{given}}}")
    if dims.dims:
        lines.append("dims:")
        lines += [f"  {scalar(n)}: {scalar(v, number=True)}" for n, v in dims.dims.items()]
    at_params = len(lines)  # the guards' params go here, once the warms have named them
    lines.append("tensors:")
    names: dict[tuple[str, str], str] = {}
    emitted: set[str] = set()
    for kind, mine in per_kind.items():
        for param, (shape, dtype) in mine.items():
            name = tensor_name(f"{kind}_{param}" if param in clash else param, emitted, dims)
            names[(kind, param)] = name
            if name not in emitted:
                emitted.add(name)
                lines.append(f"  {scalar(name)}: {{shape: [{', '.join(shape)}], dtype: {dtype}}}")
    lines.append("layers:")
    written = Written(names, stacks, dynamic, taken={*dims.dims, *emitted})
    for (kind, reading), source, path in zip(readings, sources, paths, strict=True):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        suffix = f"_{kind}" if len(readings) > 1 else ""
        lines += _layer(
            kind,
            reading=reading,
            source=f"{rel}:{split_source(source)[1]}",
            written=written,
            notices=notices,
            suffix=suffix,
            lasts=lasts,
        )
    lines[at_params:at_params] = written.param_lines()
    notices += [f"{u.file}:{u.line}: {u.what}" for _, r in readings for u in r.unresolved]
    notices += [f"{u.file}:{u.line}: {u.what}" for u in resolver.notes[read_notes:]]
    notices += dims.notices
    text = "\n".join(lines) + "\n"
    out = Layout(text).run()
    # A helper inlined at every call meets its notes again at each: each is said once.
    return Extracted(out if out is not None else text, list(dict.fromkeys(notices)))


def _layer(
    kind: str,
    *,
    reading: Reading,
    source: str,
    written: Written,
    notices: list[str],
    suffix: str,
    lasts: dict[tuple[str, str], int],
) -> list[str]:
    """One layer kind; its warms' names end in ``suffix`` (warm names are plan-wide).
    Stages, their reads, tasks and deps are the runs the source checks compare
    (``base.stage_runs``), so that the skeleton reports nothing against its code."""
    names = written.names
    mapping = {names[(kind, p)]: p for (k, p) in names if k == kind and names[(k, p)] != p}
    lines = [f"  {scalar(kind)}:", f"    source: {scalar(source)}"]
    if mapping:
        pairs = ", ".join(f"{scalar(t)}: {scalar(p)}" for t, p in mapping.items())
        lines.append(f"    source_params: {{{pairs}}}")
    lines.append("    stages:")
    kernels, runs = _stages(reading)
    named = stage_names(kernels)
    writable = {w.deps for w in reading.warms if written.declares(kind, w)}
    task_of = _tasks(reading, runs, notices, writable)
    for i, k in enumerate(kernels):
        entry = [f"name: {scalar(named[i])}"]
        if i in task_of:
            entry.append(f"task: {scalar(task_of[i])}")
        read: set[str] = set()
        for member in runs.kernels[i]:
            read |= member.reads
        reads = [
            _read(names[(kind, p)], p, runs.kernels[i], lasts.get((kind, p)))
            for p in reading.params
            if p in read and (kind, p) in names
        ]
        if reads:
            entry.append(f"reads: [{', '.join(reads)}]")
        if identifier_problem(k.name, reserved=False) is None:
            entry.append(f"kernel: {scalar(k.name)}")
        else:
            notices.append(f"{k.file}:{k.line}: kernel '{k.name}' is no plan name: not compared")
        direct = runs.direct(i)
        entry.append(f"deps: [{', '.join(scalar(named[j]) for j in direct)}]")
        called = tuple(dict.fromkeys(c for m in runs.kernels[i] for c in m.collectives))
        if called:  # a collective (PC105), its primitives and what runs them in a comment
            lines.append(f"      {collectives.comment(called)}")
            entry.append(f"collective: {collectives.engine(called)}")
        lines.append(f"      - {{{', '.join(entry)}}}")
    warm_lines = warms(
        kind,
        reading=reading,
        written=written,
        notices=notices,
        suffix=suffix,
        anchors={task: named[i] for i, task in sorted(task_of.items())},  # in stage order
    )
    if warm_lines:
        lines += ["    warms:", *warm_lines]
    return lines


def _stages(reading: Reading) -> tuple[list[Kernel], Runs]:
    """The kernels that are stages, and their runs: every resolved kernel but the later
    copies of an unrolled scope that join their first copy's run (a stage stands for all
    its copies); a copy that waits on a later stage than its first copy's is a stage."""
    named = [k for k in reading.kernels if not k.opaque and k.name]
    heads = [k for k in named if k.copy_of is None]
    for rounds in range(_ROUNDS + 1):
        runs = stage_runs(reading, dict(enumerate(heads)))
        away = [
            k
            for k in named
            if k.copy_of is not None
            and k not in heads
            and (rounds == _ROUNDS or runs.owner.get(k.index) != runs.owner.get(k.copy_of))
        ]
        if not away:
            return heads, runs
        heads = sorted([*heads, *away], key=lambda k: k.index)
    return heads, stage_runs(reading, dict(enumerate(heads)))


_ROUNDS = 4  # copies found away from their first copy's run; then every copy is a stage


def _read(name: str, param: str, members: Sequence[Kernel], last: int | None) -> str:
    """A stage's read of ``param``: `{tensor: NAME, share: A/B}` when each of its kernels
    reads the same columns of it, a part of its ``last`` dim; else the plain name."""
    cols = {m.columns.get(param) for m in members}
    span = cols.pop() if len(cols) == 1 else None
    if span is None or last is None or span[1] > last:
        return scalar(name)
    share = Fraction(span[1] - span[0], last)
    if share >= 1:
        return scalar(name)
    return f"{{tensor: {scalar(name)}, share: {share.numerator}/{share.denominator}}}"


def _tasks(
    reading: Reading, runs: Runs, notices: list[str], waited: set[frozenset[int]]
) -> dict[int, str]:
    """Each stage's task: the first task variable of the layer function (by line) whose
    kernels all lie in the stage's run, and which the plan's rules take as a name; for a
    stage a warm scope the skeleton declares waits on (``waited``: their `deps=`), the
    task of the helper it waits on (a forward inlining its layers). A task of the layer
    function bound inside a loop outside kernels holds one iteration's task: it is left
    out (PC209)."""
    task_of: dict[int, str] = {}
    inner = [t for t in reading.inner.values() if t.kernels in waited]
    own = list(reading.tasks.values())
    for t in [*sorted(own, key=lambda t: t.line), *inner]:
        owners = {runs.owner.get(i) for i in t.kernels}
        if t.opaque or len(owners) != 1 or None in owners:
            continue
        (owner,) = owners
        assert owner is not None
        if owner in task_of:
            continue
        if identifier_problem(t.name, reserved=False, private=True) is not None:
            if t.name.strip("_"):
                notices.append(f"{t.file}:{t.line}: task '{t.name}' left out: not a name")
            continue
        if t.loop is not None and any(t is o for o in own):
            notices.append(
                f"{t.file}:{t.line}: task '{t.name}' left out: bound once per iteration of "
                f"the loop at {t.loop.file}:{t.loop.line} (PC209)"
            )
            continue
        task_of[owner] = t.name
    return task_of


def _config(path: str) -> dict[str, int]:
    try:  # read as `validate` reads a plan's `config:`
        data = read_config_at(Path(path), path).data
    except ConfigError as exc:
        raise SourceError(str(exc)) from None
    return {k: v for k, v in data.items() if type(v) is int}


__all__ = ["Extracted", "Refused", "extract", "run"]
