"""The forward: a list of layer kinds, written out or read from a config list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from plancc import codes, ir
from plancc.diagnostics import Pos
from plancc.resolve.context import Context, Unresolved, is_int
from plancc.schema import plan as model
from plancc.text import clip, json_kind

MAX_FORWARD_LAYERS = 100_000  # far beyond any model; keeps a typo'd `repeat` from exhausting memory


def resolve_forward(ctx: Context, layers: dict[str, ir.Layer]) -> ir.Forward | None:  # noqa: C901 (each form of `forward` and its checks, in the order they report)
    fwd = ctx.plan.forward
    if fwd is None:
        return None
    kinds: list[str] = []
    ok = True

    def kind_ref(name: str, pos: Pos) -> bool:
        if name in layers:
            return True
        b = ctx.v.broken
        if name not in b.kinds and not b.all_kinds:
            ctx.unknown(pos, f"unknown layer kind '{clip(name)}'", name, layers)
        return False

    if isinstance(fwd, list):
        for i, entry in enumerate(fwd):
            name = entry if isinstance(entry, str) else entry.layer
            pos = (
                ctx.v.at("forward", i)
                if isinstance(entry, str)
                else ctx.v.at("forward", i, "layer")
            )
            repeat: int | None = 1
            if not isinstance(entry, str):
                try:
                    _, repeat = ctx.evaluate(
                        entry.repeat, ctx.v.at("forward", i, "repeat"), "repeat"
                    )
                except Unresolved:
                    ok = False
                    continue
            if repeat is None:
                ctx.report(
                    ctx.v.at("forward", i, "repeat"),
                    codes.BAD_FORWARD,
                    f"repeat of forward entry {i} is dynamic: a forward has a fixed length",
                )
            if not kind_ref(name, pos) or repeat is None:
                ok = False
                continue
            if len(kinds) + repeat > MAX_FORWARD_LAYERS:
                ctx.report(
                    ctx.v.at("forward", i),
                    codes.BAD_FORWARD,
                    f"forward has more than {MAX_FORWARD_LAYERS:,} layers at entry {i}",
                )
                return None
            kinds.extend([name] * repeat)
        if not fwd and not ctx.v.broken.forward:
            ctx.report(
                ctx.v.at("forward"),
                codes.BAD_FORWARD,
                "forward is empty: a forward has at least one layer",
            )
            return None
        # An item dropped after a schema error leaves the count unknown.
        complete = ok and not ctx.v.broken.forward
        return ir.Forward(tuple(kinds)) if complete else None
    return forward_from_config(ctx, fwd, kind_ref)


def forward_from_config(  # noqa: C901 (every check that does not depend on another runs and reports (the docstring))
    ctx: Context, fwd: model.ForwardFromConfig, kind_ref: Callable[[str, Pos], bool]
) -> ir.Forward | None:
    """Every check that does not depend on another's outcome runs and reports: the
    kinds, `layers`, the list's values, `layers` against the list's length, and each
    value without a kind (once, at the first layer it occurs at)."""
    key = fwd.from_config
    key_pos = ctx.v.at("forward", "from_config")
    known = [kind_ref(k, ctx.v.at("forward", "kinds", v)) for v, k in fwd.kinds.items()]
    unique = unique_kinds_keys(ctx, fwd)
    count = forward_layers(ctx, fwd)
    values = config_list(ctx, key, key_pos)
    if values is None or count is False:  # no list, or unknown how much of it to take
        return None
    if not values:
        ctx.report(
            key_pos,
            codes.BAD_FORWARD,
            f"config key '{key}' is an empty list: the forward has no layers",
        )
        return None
    ok = unique and all(known) and all(is_int(v) for v in values)
    if count is not None and count > len(values):
        ctx.report(
            ctx.v.at("forward", "layers"),
            codes.BAD_FORWARD,
            f"forward.layers is {count}, but '{key}' has only {len(values)} entries: "
            f"layer {len(values)} has none",
        )
        ok = False
    taken = len(values) if count is None else min(count, len(values))
    if taken > MAX_FORWARD_LAYERS:
        where = "forward.layers" if count is not None else f"'{key}'"
        ctx.report(
            ctx.v.at("forward", "layers") if count is not None else key_pos,
            codes.BAD_FORWARD,
            f"{where} gives a forward of {taken:,} layers, more than {MAX_FORWARD_LAYERS:,}",
        )
        return None
    if ctx.v.broken.forward:  # a dropped `kinds` entry may be the one a value lacks
        return None
    kinds_by_value = {int(k): v for k, v in fwd.kinds.items()}
    unmapped: dict[int, list[int]] = {}  # value -> the layers it is at
    for index, value in enumerate(values[:count]):
        if is_int(value) and value not in kinds_by_value:
            unmapped.setdefault(value, []).append(index)
    for value, at in unmapped.items():
        where = f"layer {at[0]}"
        if len(at) > 1:
            where = f"first at {where}, {len(at)} layers in all"
        ctx.report(
            key_pos,
            codes.BAD_FORWARD,
            f"'{key}' value {value} ({where}) has no layer kind in forward.kinds",
            f"add `{value}: <layer kind>` to forward.kinds",
        )
    if not ok or unmapped:
        return None
    return ir.Forward(tuple(kinds_by_value[v] for v in values[:count]))


def unique_kinds_keys(ctx: Context, fwd: model.ForwardFromConfig) -> bool:
    """Two `forward.kinds` keys for one integer (`4` and `04`, `0` and `-0`) are PC011
    at the second: which kind the value maps to would depend on key order."""
    first: dict[int, str] = {}
    for text in fwd.kinds:
        value = int(text)
        if value not in first:
            first[value] = text
            continue
        at = ctx.v.key_at("forward", "kinds", first[value])
        ctx.report(
            ctx.v.key_at("forward", "kinds", text),
            codes.DUPLICATE_NAME,
            f"forward.kinds key '{text}' is the value {value} again, like key "
            f"'{first[value]}' at {at.line}:{at.col}",
            "keep one key per value",
        )
    return len(first) == len(fwd.kinds)


def forward_layers(ctx: Context, fwd: model.ForwardFromConfig) -> int | Literal[False] | None:
    """`forward.layers` (None: absent, take the whole list; False: reported bad)."""
    if fwd.layers is None:
        return None
    layers_pos = ctx.v.at("forward", "layers")
    try:
        _, n = ctx.evaluate(fwd.layers, layers_pos, "forward.layers")
    except Unresolved:
        return False
    if n is None:
        ctx.report(
            layers_pos,
            codes.BAD_FORWARD,
            "forward.layers is dynamic: a forward has a fixed length",
        )
        return False
    return n


def config_list(ctx: Context, key: str, pos: Pos) -> list[Any] | None:
    """The config's list under ``key``, its first non-integer reported; None after
    reporting why there is no list."""
    if ctx.config is None:
        if not ctx.config_broken:
            ctx.report(
                pos,
                codes.UNKNOWN_NAME,
                f"unknown config key '{clip(key)}': the plan has no `config`",
            )
        return None
    if key not in ctx.config:
        lists = [k for k, v in ctx.config.items() if isinstance(v, list)]
        ctx.unknown(pos, f"unknown config key '{clip(key)}'", key, lists)
        return None
    values = ctx.config[key]
    if not isinstance(values, list):
        got = clip(json_kind(values))
        ctx.report(
            pos, codes.BAD_FORWARD, f"config key '{clip(key)}' is {got}, not a list of integers"
        )
        return None
    for index, value in enumerate(values):
        if not is_int(value):
            ctx.report(
                pos,
                codes.BAD_FORWARD,
                f"'{clip(key)}' value at layer {index} is {clip(json_kind(value))}, not an integer",
            )
            break
    return values
