"""Stage 3, resolve: a validated plan -> the frozen IR of ``plancc.ir``.

Resolution is where names meet: it reports what stops a name or a number
from resolving (PC005, PC010-PC014, PC023) and leaves out of the IR whatever
did not resolve, remembering it so that nothing downstream reports it twice.
The parts share one ``Context``: ``dims``, ``tensors``, ``layers`` (stages and
warms), ``namespace`` and ``forward``, run in that order by ``resolve``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType

from plancc import codes, ir
from plancc.diagnostics import Diagnostic, Pos
from plancc.load import ConfigError, FileReader, read_config, read_config_file
from plancc.resolve.context import Context
from plancc.resolve.dims import resolve_dims
from plancc.resolve.forward import MAX_FORWARD_LAYERS, resolve_forward
from plancc.resolve.layers import parse_size, resolve_layer
from plancc.resolve.namespace import check_function_names, check_namespace
from plancc.resolve.tensors import resolve_tensors
from plancc.tables.platforms import PLATFORMS
from plancc.validate import Validated

__all__ = ["MAX_FORWARD_LAYERS", "parse_size", "resolve"]


def resolve(
    v: Validated,
    read_file: FileReader = read_config_file,
    *,
    point: str = "default",
    overrides: Mapping[str, int] = MappingProxyType({}),
) -> tuple[ir.Plan | None, list[Diagnostic]]:
    """``read_file`` reads the `config` file (the language server's sees unsaved buffers).
    ``point``: the value every param takes (its "default", or its range's "lo" or "hi"
    end), but those ``overrides`` fixes (`--set NAME=VALUE`)."""
    if v.plan is None:
        return None, []
    ctx = Context(v, v.plan, read_file, point=point, overrides=overrides)
    return _run(ctx), ctx.diagnostics


def _run(ctx: Context) -> ir.Plan:
    p = ctx.plan
    ctx.name_check(p.model, ctx.v.at("model"), "model", reserved=False)
    platform = None if ctx.v.broken.platform else PLATFORMS[p.platform]
    _load_config(ctx)
    dims = resolve_dims(ctx)
    tensors = resolve_tensors(ctx)
    layers = {kind: resolve_layer(ctx, kind, layer, tensors) for kind, layer in p.layers.items()}
    check_namespace(ctx, tensors, layers)
    check_function_names(ctx, layers)
    forward = resolve_forward(ctx, layers)
    ignore: dict[str, Pos] = {}  # codes compare case-insensitively
    lint: list[ir.Silence] = []
    for i, rid in enumerate(p.lint.ignore):
        entry = ctx.v.doc_path(("lint", "ignore", i))
        lint.append((rid, ctx.v.doc.at(entry), "lint.ignore", entry))
    for rid, pos, _, _ in lint:
        ignore.setdefault(rid.upper(), pos)
    return ir.Plan(
        file=ctx.file,
        sha256=hashlib.sha256(ctx.v.doc.raw).hexdigest(),
        model=p.model,
        model_pos=ctx.v.at("model"),
        platform=platform,
        platform_pos=ctx.v.at("platform"),
        l2_fraction=Fraction(str(p.budget.l2_fraction)),
        dims=dims,
        config=MappingProxyType(dict(sorted(ctx.config_used.items()))),
        tensors=MappingProxyType(tensors),
        layers=MappingProxyType(layers),
        forward=forward,
        lint_ignore=MappingProxyType(ignore),
        silences=(*ctx.silences, *lint),
        declared_warms=_declared_warms(ctx),
        config_file=ctx.config_file,
        params=tuple(sorted(ctx.params, key=lambda p: ctx.plan_order[p.name])),
    )


def _load_config(ctx: Context) -> None:
    if ctx.plan.config is None:
        ctx.config_broken = ctx.v.broken.config  # dropped: PC002 said why
        return
    try:
        config = read_config(ctx.file, ctx.plan.config, ctx.read_file)
        ctx.config = config.data
        ctx.config_file = (config.path, config.sha256)
    except ConfigError as exc:
        ctx.config_broken = True
        ctx.report(ctx.v.at("config"), codes.CONFIG_FILE, str(exc))


def _declared_warms(ctx: Context) -> int:
    """The mappings in every layer kind's `warms` list of the document itself.

    Read from the document, not the validated plan, so that a warm dropped
    for a missing key (or inside a layer kind dropped whole) still counts.
    """
    layers = ctx.v.doc.data.get("layers")
    kinds = layers.values() if isinstance(layers, dict) else ()
    lists = (k.get("warms") for k in kinds if isinstance(k, dict))
    return sum(
        sum(isinstance(w, dict) for w in warms) for warms in lists if isinstance(warms, list)
    )
