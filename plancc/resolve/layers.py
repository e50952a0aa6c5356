"""Layer kinds: their stages and warms, each warm's anchor and live interval."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import ROUND_CEILING, Decimal, localcontext
from fractions import Fraction
from functools import partial
from types import MappingProxyType

from plancc import codes, fixes, ir
from plancc import expr as ex
from plancc.diagnostics import Pos
from plancc.facts.liveness import join_gate, live_interval, readers
from plancc.load import PathT
from plancc.resolve.context import Context, Unresolved
from plancc.resolve.forms import guards, rows
from plancc.resolve.tensors import flat_view, tensor_ref, unknown_tensor
from plancc.schedule import Schedule, schedule
from plancc.schema import plan as model
from plancc.schema.plan import SIZE_PATTERN
from plancc.text import clip

_UNITS = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9}
_UNITS |= {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def parse_size(text: str | int) -> int:
    """Bytes in a `streams` value (``427.8 MB``); fractional bytes round up."""
    if isinstance(text, int):
        return text
    number, unit = text.split()[0], text.split()[-1]
    if len(text.split()) == 1:
        i = next(i for i, c in enumerate(text) if c.isalpha())
        number, unit = text[:i], text[i:]
    with localcontext() as ctx:
        ctx.prec = 2 * len(text) + 20  # exact: the default 28 digits would round or raise
        exact = Decimal(number.strip()) * _UNITS[unit.strip()]
        return int(exact.to_integral_value(rounding=ROUND_CEILING))  # `//` truncates a Decimal


def _streams(ctx: Context, streams: int | str | None, path: PathT, stage: str) -> int:
    """A stage's `streams` in bytes: a number, a size with a unit, or a dim expression
    (over dims, config keys and params); 0 when absent or when it does not resolve."""
    if streams is None:
        return 0
    if isinstance(streams, int) or re.match(SIZE_PATTERN, streams):
        return parse_size(streams)
    try:
        _, value = ctx.evaluate(streams, ctx.v.at(*path), f"streams of stage '{stage}'")
    except Unresolved:
        return 0
    if value is None:
        ctx.report(
            ctx.v.at(*path),
            codes.BAD_EXPRESSION,
            f"streams of stage '{stage}' uses a dynamic dim; give a param its range instead",
        )
        return 0
    return value


def _reads(
    ctx: Context, s: model.Stage, path: PathT, tensors: dict[str, ir.Tensor]
) -> tuple[tuple[str, ...], tuple[tuple[str, Fraction], ...], bool]:
    """The tensors a stage reads, the shares of those it reads part of, and whether every
    item of its `reads` is among them (an unknown name, PC010, or an item a schema error
    spoiled is not: the readers the rules see are not the plan's)."""
    reads = []
    shares: list[tuple[str, Fraction]] = []
    whole = ctx.v.doc_path((*path, "reads")) not in ctx.v.kept
    for j, item in enumerate(s.reads):
        t = item if isinstance(item, str) else item.tensor
        where = ("reads", j) if isinstance(item, str) else ("reads", j, "tensor")
        if not (t in tensors or tensor_ref(ctx, t, partial(ctx.v.at, *path, *where), tensors)):
            whole = whole and not unknown_tensor(ctx, t)
        else:
            reads.append(t)
            if not isinstance(item, str):
                share = _share(ctx, item.share, (*path, "reads", j, "share"), s.name, t)
                if share is not None and share != 1:
                    shares.append((t, share))
    return tuple(reads), tuple(shares), whole


_SLASH = re.compile(r"(?<!/)/(?!/)")  # a fraction's bar, not `//`


def _share(
    ctx: Context, share: int | float | str, path: PathT, stage: str, tensor: str
) -> Fraction | None:
    """The part of ``tensor`` a stage reads: a number, or a fraction whose numerator and
    denominator are dim expressions (``6/17``, ``MLP_N / MLP_ON``); it must lie in (0, 1].
    None after reporting why not (PC012)."""
    pos = ctx.v.at(*path)
    what = f"share of '{tensor}' in stage '{stage}'"
    if isinstance(share, str) and len(_SLASH.findall(share)) > 1:
        ctx.report(pos, codes.BAD_EXPRESSION, f"{what}: '{clip(share)}' has more than one '/'")
        return None
    if isinstance(share, int | float):
        value = Fraction(repr(share)) if isinstance(share, float) else Fraction(share)
    else:
        try:
            parts = [ctx.evaluate(part, pos, what)[1] for part in _SLASH.split(share)]
        except Unresolved:
            return None
        if any(p is None for p in parts):
            ctx.report(pos, codes.BAD_EXPRESSION, f"{what} uses a dynamic dim")
            return None
        value = Fraction(parts[0] or 1, (parts[1] if len(parts) == 2 else 1) or 1)
    if not 0 < value <= 1:
        ctx.report(
            pos,
            codes.BAD_EXPRESSION,
            f"{what} is {value}; a share is a fraction in (0, 1]",
            "a stage that reads part of a tensor: `share: 6/17`",
        )
        return None
    return value


def _unique_task(
    ctx: Context, kind: str, stage: tuple[str, int], task: str, *, tasks: dict[str, tuple[str, int]]
) -> None:
    """One TaskId gates one stage: two warms gated by it would be PC101's split scope.
    ``stage`` and ``tasks`` hold a stage's name and index."""
    if task not in tasks:
        tasks[task] = stage
        return
    other, index = tasks[task]
    at = ctx.v.at("layers", kind, "stages", index, "task")
    ctx.report(
        ctx.v.at("layers", kind, "stages", stage[1], "task"),
        codes.DUPLICATE_NAME,
        f"task '{clip(task)}' of stage '{stage[0]}' is also the task of stage '{other}' "
        f"(at {at.line}:{at.col}) in layer kind '{kind}'",
        "each stage's `task` names the variable holding its own TaskId",
    )


def _deps(
    ctx: Context, kind: str, stage: tuple[str, int], deps: Sequence[str], index: Mapping[str, int]
) -> tuple[tuple[int, ...], bool]:
    """The indices of the stages ``stage`` (its name and index) waits for; ``index`` maps
    every stage name of the kind to its first index. An entry that names no stage (PC010),
    repeats one (PC011), or names the stage itself or one listed after it (PC015) is
    reported and left out. Also whether the graph is the plan's: no entry but a repeat
    left out (nor one a schema error spoiled)."""
    name, i = stage
    out: dict[int, int] = {}  # stage index -> the entry naming it first
    whole = ctx.v.doc_path(("layers", kind, "stages", i, "deps")) not in ctx.v.kept
    for j, dep in enumerate(deps):
        where = ctx.v.at("layers", kind, "stages", i, "deps", j)
        d = index.get(dep)
        if d is None:
            whole = False
            if (kind, dep) not in ctx.v.broken.stages:
                message = f"unknown stage '{clip(dep)}' in the deps of stage '{name}'"
                ctx.unknown(where, message, dep, index)
        elif d in out:
            first = ctx.v.at("layers", kind, "stages", i, "deps", out[d])
            ctx.report(
                where,
                codes.DUPLICATE_NAME,
                f"stage '{dep}' is listed twice in the deps of stage '{name}' "
                f"(first at {first.line}:{first.col})",
            )
        elif d >= i:
            whole = False
            ctx.report(
                where,
                codes.BAD_DEPS,
                f"stage '{name}' waits for "
                + ("itself" if d == i else f"'{dep}', which is listed after it"),
                "a stage waits only for stages listed before it: list the stages in an order "
                "in which each comes after its deps",
            )
        else:
            out[d] = j
    return tuple(out), whole


def resolve_layer(
    ctx: Context, kind: str, layer: model.Layer, tensors: dict[str, ir.Tensor]
) -> ir.Layer:
    ctx.name_check_at(kind, partial(ctx.v.key_at, "layers", kind), "layer kind", reserved=False)
    stages: list[ir.Stage] = []
    seen: dict[str, int] = {}  # stage name -> the first stage's index
    tasks: dict[str, tuple[str, int]] = {}  # task -> the first stage with it, and its index
    at = ctx.v.at
    standins = ctx.v.broken.standin_stages
    index: dict[str, int] = {}  # every stage's name -> its first index, for `deps`
    # Whether every stage's `deps` and `reads` are the plan's: an error in one (an unknown
    # name) changes the graph or the readers the rules would judge.
    whole = True
    for i, s in enumerate(layer.stages):
        index.setdefault(s.name, i)
    # Positions are looked up only for a report, but for the stage's own (the IR's).
    for i, s in enumerate(layer.stages):
        path = ("layers", kind, "stages", i)
        if (kind, i) in standins:
            stages.append(ir.Stage(s.name, i, None, (), 0, False, None, None))
            continue  # it keeps its index; its own problems are reported already
        ctx.name_check_at(s.name, partial(at, *path, "name"), "stage", reserved=False)
        if s.task is not None:
            ctx.name_check_at(
                s.task, partial(at, *path, "task"), "task", reserved=False, private=True
            )
            _unique_task(ctx, kind, (s.name, i), s.task, tasks=tasks)
        if s.kernel is not None:
            ctx.name_check(s.kernel, at(*path, "kernel"), "kernel", reserved=False)
        if s.name in seen:
            first = at("layers", kind, "stages", seen[s.name], "name")
            ctx.report(
                at(*path, "name"),
                codes.DUPLICATE_NAME,
                f"stage '{s.name}' is defined twice in layer kind '{kind}' "
                f"(first at {first.line}:{first.col})",
            )
        seen.setdefault(s.name, i)
        reads, shares, read_whole = _reads(ctx, s, path, tensors)
        deps = None
        if s.deps is not None:
            deps, deps_whole = _deps(ctx, kind, (s.name, i), s.deps, index)
            whole = whole and deps_whole
        whole = whole and read_whole
        stages.append(
            ir.Stage(
                name=s.name,
                index=i,
                task=s.task,
                reads=reads,
                streams=_streams(ctx, s.streams, (*path, "streams"), s.name),
                sdma=s.sdma,
                collective=s.collective,
                group=s.group,
                duration_us=s.duration_us,
                kernel=s.kernel,
                locate=partial(at, *path),
                deps=deps,
                shares=tuple(shares),
            )
        )
    by_name: dict[str, ir.Stage] = {}
    for stage in stages:
        by_name.setdefault(stage.name, stage)  # a duplicate stage name (PC011) keeps its first
    # Indexed once per layer kind, not once per warm.
    timed = (schedule([s.deps for s in stages]), by_name, readers(stages))
    warms = [
        resolve_warm(ctx, kind, i, raw, stages=timed, tensors=tensors)
        for i, raw in enumerate(layer.warms)
    ]
    complete = whole and not any(k == kind for k, _ in ctx.v.broken.standin_stages)
    return ir.Layer(kind, tuple(stages), tuple(warms), complete)


def resolve_warm(
    ctx: Context,
    kind: str,
    i: int,
    w: model.Warm,
    *,
    stages: tuple[Schedule, dict[str, ir.Stage], dict[str, list[int]]],
    tensors: dict[str, ir.Tensor],
) -> ir.Warm:
    timed, by_name, read_by = stages  # the layer kind's schedule, stages by name, readers
    path = ("layers", kind, "warms", i)
    allow: dict[str, Pos] = {}  # codes compare case-insensitively: `allow: [pc107]`
    for k, rid in enumerate(w.allow or ()):
        allow.setdefault(rid.upper(), ctx.v.at(*path, "allow", k))
        entry = ctx.v.doc_path((*path, "allow", k))
        ctx.silences.append((rid, ctx.v.doc.at(entry), ir.allow_scope(w.name), entry))
    locate = partial(ctx.v.at, *path)  # the IR's positions, looked up when asked for
    ctx.name_check_at(w.name, partial(locate, "name"), "warm", reserved=True)
    if w.name_hint is not None:
        ctx.name_check(w.name_hint, locate("name_hint"), "name_hint", reserved=False)
    gates = _anchors(ctx, kind, w, by_name, locate)
    # An `after` naming nothing (or a stage twice) leaves the warm out of time.
    whole_after = bool(gates)
    entries, whole = _entries(ctx, w, path, tensors)
    return make_warm(
        timed,
        gates,
        tuple(entries),
        read_by,
        name=w.name,
        name_hint=w.name_hint or w.name,
        layer=kind,
        allow=MappingProxyType(allow),
        reason=w.reason,
        locate=locate,
        path=ctx.v.doc_path(path),
        listed=_listed(ctx, path),
        complete=whole and whole_after,
        next_layer=w.next_layer,
        guards=guards(ctx, w.guard, (*path, "guard")),
    )


def make_warm(
    timed: Schedule,
    gates: Sequence[ir.Stage],
    entries: tuple[ir.WarmEntry, ...],
    read_by: Mapping[str, Sequence[int]],
    *,
    name: str,
    name_hint: str,
    layer: str,
    allow: Mapping[str, Pos],
    reason: str | None,
    locate: ir.Locate,
    path: tuple[str | int, ...],
    listed: int,
    complete: bool = True,
    next_layer: bool = False,
    guards: tuple[ir.Guard, ...] = (),
) -> ir.Warm:
    """A warm of the layer kind whose schedule is ``timed`` and whose readers (tensor ->
    stage indices) are ``read_by``, anchored at ``gates`` (none: an anchor named no stage):
    what resolve makes of a declared warm and `plancc suggest` of a candidate.

    Of a join, the anchor is the stage the warm waits for (``join_gate``). It is alive
    from its anchors' finish through the last stage after them reading any of its static
    tensors (dynamic ones count for nothing but PC020); with an unknown anchor, alive
    nowhere, but its tensors are still checked. ``complete``: every tensor and anchor it
    names resolved (the budget rules judge it only then). A cross-layer warm's consumers
    are the next layer's: in its own layer kind it is alive from its anchor to the end."""
    anchors = tuple(s.index for s in gates)
    gate = join_gate(timed, gates)
    held = {e.tensor.name for e in entries if e.tensor.static}
    return ir.Warm(
        name=name,
        name_hint=name_hint,
        layer=layer,
        anchor=None if gate is None else gate.index,
        entries=entries,
        live=live_interval(timed, anchors, set() if next_layer else held, read_by),
        allow=allow,
        reason=reason,
        locate=locate,
        path=path,
        listed=listed,
        anchors=anchors,
        complete=complete,
        next_layer=next_layer,
        guards=guards,
    )


def _entries(
    ctx: Context, w: model.Warm, path: PathT, tensors: dict[str, ir.Tensor]
) -> tuple[list[ir.WarmEntry], bool]:
    """The warm's tensors that resolve, in issue order, and whether every item resolved
    (and none a schema error spoiled): only then are its entries the plan's. A tensor
    listed twice is PC011 (its fix removes the second), unless each time with rows and the
    ranges do not overlap (two prefixes of one tensor)."""
    entries: list[ir.WarmEntry] = []
    seen: dict[str, list[tuple[ir.Rows | None, ir.Locate]]] = {}
    whole = ctx.v.doc_path((*path, "tensors")) not in ctx.v.kept
    for j, item in enumerate(w.tensors):
        item_path = (*path, "tensors", j)
        name = item if isinstance(item, str) else item.tensor
        under = ("tensors", j) if isinstance(item, str) else ("tensors", j, "tensor")
        pos = partial(ctx.v.at, *path, *under)
        tensor = tensor_ref(ctx, name, pos, tensors)
        range_ = None
        if tensor is not None and not isinstance(item, str) and item.rows is not None:
            range_ = rows(ctx, item.rows, (*item_path, "rows"), tensor)
            if range_ is None:
                whole = False
                continue
        clash = next(
            (at for r, at in seen.get(name, ()) if range_ is None or range_.overlaps(r)), None
        )
        if clash is not None:
            first = clash()
            what = "listed twice" if range_ is None else "listed twice with overlapping rows"
            at = ctx.v.doc_path(item_path)
            title = f"remove the second '{clip(name)}' from warm '{w.name}'"
            ctx.report(
                pos(),
                codes.DUPLICATE_NAME,
                f"tensor '{name}' is {what} in warm '{w.name}' (first at {first.line}:{first.col})",
                fix=fixes.remove(at[:-1], (at[-1],), title),
            )
            continue
        seen.setdefault(name, []).append((range_, pos))
        if tensor is None:
            whole = whole and not unknown_tensor(ctx, name)
            continue
        flat = tensor.flat
        if range_ is not None and flat is not None:
            flat = _rows_flat(tensor, range_, flat.locate)
        if not isinstance(item, str) and item.flat is not None:
            try:
                flat = flat_view(ctx, item.flat, (*item_path, "flat"), name)
            except Unresolved:
                whole = False
                continue
        index = int(ctx.v.doc_path(item_path)[-1])
        entries.append(ir.WarmEntry(tensor, flat, pos, index, range_))
    return entries, whole


def prefix_entry(
    tensor: ir.Tensor, lo: int, hi: int, locate: ir.Locate, index: int
) -> ir.WarmEntry:
    """A prefix of ``tensor``'s rows [lo, hi) as resolve makes a warm's entry of it, with
    its default flat view: what `plancc suggest` makes of a prefix candidate."""
    rows = ir.Rows(lo, hi, str(lo), str(hi), frozenset())
    flat = None if tensor.flat is None else _rows_flat(tensor, rows, locate)
    return ir.WarmEntry(tensor, flat, locate, index, rows)


def _rows_flat(tensor: ir.Tensor, rows: ir.Rows, locate: ir.Locate) -> ir.FlatView:
    """A prefix's default flat view: the product of its rows' count and the other dims."""
    count = rows_count(rows)
    elements = (tensor.elements or 0) // (tensor.shape[0] or 1) * (rows.hi - rows.lo)
    return ir.FlatView(
        (" * ".join(ex.factor(t) for t in (count, *tensor.shape_source[1:])),),
        (elements,),
        tensor.names | rows.names,
        locate,
        declared=False,
    )


def rows_count(rows: ir.Rows) -> str:
    """How many rows a prefix holds, as Python source: ``HI`` as the plan writes it from
    row 0, else the count (``HI - LO`` would repeat LO's names: ``HALF + 2 - HALF``)."""
    return rows.hi_source if rows.lo == 0 else str(rows.hi - rows.lo)


def _listed(ctx: Context, path: tuple[str | int, ...]) -> int:
    """How many items the warm's `tensors` list has in the document."""
    node = ctx.v.doc.data
    for part in ctx.v.doc_path((*path, "tensors")):
        node = node[part]
    return len(node)


def _anchors(
    ctx: Context, kind: str, w: model.Warm, by_name: dict[str, ir.Stage], locate: ir.Locate
) -> list[ir.Stage]:
    """The warm's anchor stages, in `after`'s order; none when one names no stage
    (PC010, unless its stage was dropped) or a join names one twice (PC011)."""
    join = not isinstance(w.after, str)
    names: list[str] = [w.after] if isinstance(w.after, str) else list(w.after)
    out: list[ir.Stage] = []
    ok = True
    for j, name in enumerate(names):
        where = ("after", j) if join else ("after",)
        stage = by_name.get(name)
        if stage is None:
            ok = False
            if (kind, name) not in ctx.v.broken.stages:
                message = f"unknown stage '{clip(name)}' in layer kind '{kind}'"
                ctx.unknown(locate(*where), message, name, by_name)
        elif stage in out:
            ok = False
            first = locate("after", names.index(name))
            ctx.report(
                locate(*where),
                codes.DUPLICATE_NAME,
                f"stage '{name}' is listed twice in the anchors of warm '{w.name}' "
                f"(first at {first.line}:{first.col})",
            )
        else:
            out.append(stage)
    return out if ok else []
