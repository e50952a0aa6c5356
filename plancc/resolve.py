"""Stage 3, resolve: a validated plan -> the frozen IR of ``plancc.ir``.

Resolution is where names meet: it reports what stops a name or a number
from resolving (PC005, PC010-PC014, PC023) and leaves out of the IR whatever
did not resolve, remembering it so that nothing downstream reports it twice.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import stat
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal, localcontext
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from plancc import expr as ex
from plancc import ir, model
from plancc.diagnostics import Diagnostic, Pos, clip, diag
from plancc.load import MAX_BYTES, PathT, read_capped
from plancc.names import DTYPES, identifier_problem, suggest
from plancc.platforms import PLATFORMS
from plancc.validate import Validated

_UNITS = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9}
_UNITS |= {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
MAX_FORWARD_LAYERS = 100_000  # far beyond any model; keeps a typo'd `repeat` from exhausting memory


class _Unresolved(Exception):
    """A name in an expression is already known to be broken: stay silent."""


def resolve(v: Validated) -> tuple[ir.Plan | None, list[Diagnostic]]:
    if v.plan is None:
        return None, []
    r = _Resolver(v, v.plan)
    return r.run(), r.diagnostics


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


@dataclass
class _Resolver:
    v: Validated
    plan: model.Plan
    diagnostics: list[Diagnostic] = field(default_factory=list)
    dim_values: dict[str, int | None] = field(default_factory=dict)
    config: dict[str, Any] | None = None
    config_broken: bool = False
    config_used: dict[str, int] = field(default_factory=dict)
    broken_tensors: set[str] = field(default_factory=set)
    silences: list[tuple[str, Pos, str]] = field(default_factory=list)
    reported: set[Diagnostic] = field(default_factory=set)
    suggestions_left: int = 100

    @property
    def file(self) -> str:
        return self.v.doc.file

    def report(self, pos: Pos, code: str, message: str, hint: str | None = None) -> None:
        d = diag(self.file, pos, code, message, hint)
        if d not in self.reported:  # e.g. one bad config key used by several dims
            self.reported.add(d)
            self.diagnostics.append(d)

    def suggest(self, name: str, candidates: Iterable[str]) -> str | None:
        """A did-you-mean hint, for the first few unknown names only: each costs a scan
        of every candidate, and a plan with thousands of typos must stay linear."""
        self.suggestions_left -= 1
        return suggest(name, candidates) if self.suggestions_left >= 0 else None

    def name_check(self, name: str, pos: Pos, what: str, *, reserved: bool) -> bool:
        problem = identifier_problem(name, reserved=reserved)
        if problem:
            self.report(pos, "PC013", f"{what} {problem}", "names reach generated code")
        return problem is None

    # -- top level -------------------------------------------------------------------------

    def run(self) -> ir.Plan:
        p = self.plan
        self.name_check(p.model, self.v.at("model"), "model", reserved=False)
        platform = None if self.v.broken.platform else PLATFORMS[p.platform]
        self.load_config()
        dims = self.resolve_dims()
        tensors = self.resolve_tensors()
        layers = {
            kind: self.resolve_layer(kind, layer, tensors) for kind, layer in p.layers.items()
        }
        self.check_namespace(tensors, layers)
        forward = self.resolve_forward(layers)
        ignore = {rid: self.v.at("lint", "ignore", i) for i, rid in enumerate(p.lint.ignore)}
        return ir.Plan(
            file=self.file,
            sha256=hashlib.sha256(self.v.doc.raw).hexdigest(),
            model=p.model,
            model_pos=self.v.at("model"),
            platform=platform,
            platform_pos=self.v.at("platform"),
            l2_fraction=Fraction(str(p.budget.l2_fraction)),
            dims=dims,
            config=dict(sorted(self.config_used.items())),
            tensors=tensors,
            layers=layers,
            forward=forward,
            lint_ignore=ignore,
            silences=(*self.silences, *((rid, pos, "lint.ignore") for rid, pos in ignore.items())),
            declared_warms=self.declared_warms(),
        )

    def declared_warms(self) -> int:
        """The mappings in every layer kind's `warms` list of the document itself.

        Read from the document, not the validated plan, so that a warm dropped
        for a missing key (or inside a layer kind dropped whole) still counts.
        """
        layers = self.v.doc.data.get("layers")
        kinds = layers.values() if isinstance(layers, dict) else ()
        lists = (k.get("warms") for k in kinds if isinstance(k, dict))
        return sum(
            sum(isinstance(w, dict) for w in warms) for warms in lists if isinstance(warms, list)
        )

    def load_config(self) -> None:
        if self.plan.config is None:
            self.config_broken = self.v.broken.config  # dropped: PC002 said why
            return
        pos = self.v.at("config")
        path = Path(self.file).parent / self.plan.config
        try:
            if "\0" in self.plan.config:  # no file system has such a name
                raise OSError(0, "a path cannot contain a NUL character")
            if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block, a device not end
                raise OSError(0, "not a regular file")
            raw = read_capped(path)
            if len(raw) > MAX_BYTES:
                raise OSError(0, "larger than 4 MiB")
            data = json.loads(raw)
        except OSError as exc:
            self.config_broken = True
            reason = exc.strerror or type(exc).__name__
            self.report(pos, "PC005", f"cannot read config '{clip(self.plan.config)}': {reason}")
            return
        except ValueError as exc:
            self.config_broken = True
            self.report(pos, "PC005", f"config '{clip(self.plan.config)}' is not JSON: {exc}")
            return
        except RecursionError:
            self.config_broken = True
            self.report(pos, "PC005", f"config '{self.plan.config}' nests too deeply to read")
            return
        if not isinstance(data, dict):
            self.config_broken = True
            self.report(pos, "PC005", f"config '{self.plan.config}' is not a JSON object")
            return
        self.config = data

    # -- expressions -------------------------------------------------------------------------

    @cached_property
    def names_known(self) -> list[str]:
        """Every name an expression may use (read after the config is loaded)."""
        config = [k for k, v in (self.config or {}).items() if _is_int(v)]
        return [*self.plan.dims, *config]

    @cached_property
    def plan_order(self) -> dict[str, int]:
        """Each dim's index in the plan."""
        return {name: i for i, name in enumerate(self.plan.dims)}

    def lookup(self, name: str, pos: Pos) -> int | None:
        if name in self.plan.dims:
            # Dims are resolved in dependency order before anything uses them, so a dim
            # without a value is broken (reported already) and never still to be resolved.
            if name not in self.dim_values:
                raise _Unresolved
            return self.dim_values[name]
        if name in self.v.broken.dims or self.v.broken.all_dims:
            raise _Unresolved
        if self.config is not None and name in self.config:
            value = self.config[name]
            if not _is_int(value):
                self.report(
                    self.v.at("config"),
                    "PC005",
                    f"config key '{name}' is used as a dim but is {clip(json.dumps(value))}, "
                    "not an integer",
                )
                raise _Unresolved
            if not self.name_check(name, pos, "config key", reserved=True):
                raise _Unresolved
            self.config_used[name] = value
            return int(value)
        if self.config_broken or self.v.broken.all_dims:
            raise _Unresolved
        self.report(
            pos, "PC010", f"unknown dim '{clip(name)}'", self.suggest(name, self.names_known)
        )
        raise _Unresolved

    def evaluate(self, source: int | str, pos: Pos, what: str) -> tuple[ex.Expr, int | None]:
        """Parse and evaluate one dim expression; _Unresolved after reporting why not."""
        try:
            parsed = ex.parse(source)
            value = ex.evaluate(parsed, lambda n: self.lookup(n, pos))
        except ex.ExprError as exc:
            self.report(pos, "PC012", f"{what}: {exc}")
            raise _Unresolved from None
        if value is not None and value < 1:
            self.report(pos, "PC012", f"{what} '{source}' is {value}; a dimension must be ≥ 1")
            raise _Unresolved
        return parsed, value

    def dim_uses(self) -> dict[str, list[str]]:
        """The dims each dim's expression uses, in the order it names them, each once.
        A dim that is dynamic or does not parse uses none (evaluating it reports why)."""
        uses: dict[str, list[str]] = {}
        for name, source in self.plan.dims.items():
            try:
                parsed = ex.parse(source) if source != "dynamic" else None
            except ex.ExprError:
                parsed = None
            used = ex.names(parsed) if parsed is not None else ()
            uses[name] = list(dict.fromkeys(n for n in used if n in self.plan.dims))
        return uses

    def dim_components(self, uses: dict[str, list[str]]) -> list[list[str]]:
        """The strongly connected components of the dims' use graph, each after every
        component it uses: Tarjan's algorithm, iterative, so that neither a long chain
        nor a long cycle of dims depends on how much of Python's stack is left."""
        index: dict[str, int] = {}  # the order dims are first reached in
        low: dict[str, int] = {}  # the smallest index reachable within the component
        stack: list[str] = []
        on_stack: set[str] = set()
        components: list[list[str]] = []
        work: list[tuple[str, Iterator[str]]] = []  # the depth-first path, iterators at each

        def reach(name: str) -> None:
            index[name] = low[name] = len(index)
            stack.append(name)
            on_stack.add(name)
            work.append((name, iter(uses[name])))

        for root in self.plan.dims:
            if root in index:
                continue
            reach(root)
            while work:
                name, todo = work[-1]
                for used in todo:
                    if used not in index:
                        reach(used)
                        break
                    if used in on_stack:
                        low[name] = min(low[name], index[used])
                else:  # every dim it uses is done: its component may be complete
                    work.pop()
                    if work:
                        parent = work[-1][0]
                        low[parent] = min(low[parent], low[name])
                    if low[name] == index[name]:
                        component = [stack.pop()]
                        while component[-1] != name:
                            component.append(stack.pop())
                        on_stack.difference_update(component)
                        components.append(component)
        return components

    def report_cycle(self, component: list[str], uses: dict[str, list[str]]) -> None:
        """One PC012 for a component of dims that use each other: the shortest cycle
        from its first dim in plan order back to it. The component's names that are
        not dims are still checked, as they would be in an expression that resolves."""
        first = min(component, key=self.plan_order.__getitem__)
        members = set(component)
        came_from: dict[str, str] = {}
        queue = deque([first])
        while True:  # breadth first: some member within the component uses `first`
            last = queue.popleft()
            if first in uses[last]:
                break
            for used in uses[last]:
                if used in members and used != first and used not in came_from:
                    came_from[used] = last
                    queue.append(used)
        cycle = [last]
        while cycle[-1] != first:
            cycle.append(came_from[cycle[-1]])
        cycle.reverse()
        self.report(self.v.at("dims", first), "PC012", f"dims form a cycle: {_cycle_text(cycle)}")
        for name in sorted(component, key=self.plan_order.__getitem__):
            pos = self.v.at("dims", name)
            for used in ex.names(ex.parse(self.plan.dims[name])):
                if used not in self.plan.dims:
                    with contextlib.suppress(_Unresolved):
                        self.lookup(used, pos)

    def resolve_dims(self) -> tuple[ir.Dim, ...]:
        uses = self.dim_uses()
        for component in self.dim_components(uses):
            name = component[0]
            if len(component) > 1 or name in uses[name]:
                self.report_cycle(component, uses)
                continue
            source = self.plan.dims[name]
            if source == "dynamic":
                self.dim_values[name] = None
                continue
            # Every dim it uses comes in an earlier component: resolved, or broken.
            with contextlib.suppress(_Unresolved):
                _, self.dim_values[name] = self.evaluate(
                    source, self.v.at("dims", name), f"dim '{name}'"
                )
        out = []
        for name in self.plan.dims:
            pos = self.v.key_at("dims", name)
            self.name_check(name, pos, "dim", reserved=True)
            if name in self.dim_values:
                out.append(ir.Dim(name, self.dim_values[name], pos))
        return tuple(out)

    def exprs(
        self, sources: list[int | str], path: PathT, what: str
    ) -> tuple[tuple[str, ...], tuple[int | None, ...], frozenset[str], list[ex.Expr]] | None:
        texts: list[str] = []
        values: list[int | None] = []
        names: set[str] = set()
        parsed: list[ex.Expr] = []
        ok = True
        for i, source in enumerate(sources):
            try:
                e, value = self.evaluate(source, self.v.at(*path, i), what)
            except _Unresolved:
                ok = False
                continue
            texts.append(ex.render(e))
            values.append(value)
            names.update(ex.names(e))
            parsed.append(e)
        if not ok:
            return None
        return tuple(texts), tuple(values), frozenset(names), parsed

    # -- tensors -----------------------------------------------------------------------------

    def resolve_tensors(self) -> dict[str, ir.Tensor]:
        out: dict[str, ir.Tensor] = {}
        for name, t in self.plan.tensors.items():
            pos = self.v.key_at("tensors", name)
            self.name_check(name, pos, "tensor", reserved=True)
            dtype = DTYPES.get(t.dtype)
            if dtype is None:
                self.report(
                    self.v.at("tensors", name, "dtype"),
                    "PC023",
                    f"unknown dtype '{clip(t.dtype)}' for tensor '{name}'",
                    self.suggest(t.dtype, DTYPES) or f"dtypes: {' '.join(DTYPES)}",
                )
            shape = self.exprs(t.shape, ("tensors", name, "shape"), f"shape of '{name}'")
            try:
                flat = self.flat_view(t.flat, ("tensors", name, "flat"), name)
            except _Unresolved:
                shape = None
            if dtype is None or shape is None:
                self.broken_tensors.add(name)
                continue
            texts, values, names, parsed = shape
            if _too_many(values):
                self.report(
                    self.v.at("tensors", name, "shape"),
                    "PC012",
                    f"shape of '{name}' has more than 2**63 - 1 elements",
                )
                self.broken_tensors.add(name)
                continue
            if flat is None and all(v is not None for v in values):
                flat = self.default_flat(parsed, values, pos)
            out[name] = ir.Tensor(name, dtype, texts, values, names, flat, pos)
        return out

    def flat_view(
        self, sources: list[int | str] | None, path: PathT, tensor: str
    ) -> ir.FlatView | None:
        """The declared view (None when absent); _Unresolved when it does not resolve."""
        if sources is None:
            return None
        got = self.exprs(sources, path, f"flat view of '{tensor}'")
        if got is None:
            raise _Unresolved
        texts, values, names, _ = got
        if _too_many(values):
            self.report(
                self.v.at(*path),
                "PC012",
                f"flat view of '{tensor}' has more than 2**63 - 1 elements",
            )
            raise _Unresolved
        return ir.FlatView(texts, values, names, self.v.at(*path), declared=True)

    @staticmethod
    def default_flat(
        parsed: list[ex.Expr], values: tuple[int | None, ...], pos: Pos
    ) -> ir.FlatView:
        # The product of the shape's entries, each compound entry in parentheses.
        text = " * ".join(
            f"({ex.render(e)})" if ex.is_compound(e) else ex.render(e) for e in parsed
        )
        total = 1
        for value in values:
            total *= value or 1
        names = frozenset(n for e in parsed for n in ex.names(e))
        return ir.FlatView((text,), (total,), names, pos, declared=False)

    # -- layers ------------------------------------------------------------------------------

    def tensor_ref(self, name: str, pos: Pos, tensors: dict[str, ir.Tensor]) -> ir.Tensor | None:
        if name in tensors:
            return tensors[name]
        broken = self.v.broken
        if name in broken.tensors or name in self.broken_tensors or broken.all_tensors:
            return None
        self.report(
            pos, "PC010", f"unknown tensor '{clip(name)}'", self.suggest(name, self.plan.tensors)
        )
        return None

    def resolve_layer(
        self, kind: str, layer: model.Layer, tensors: dict[str, ir.Tensor]
    ) -> ir.Layer:
        self.name_check(kind, self.v.key_at("layers", kind), "layer kind", reserved=False)
        stages: list[ir.Stage] = []
        seen: dict[str, Pos] = {}
        for i, s in enumerate(layer.stages):
            path = ("layers", kind, "stages", i)
            name_pos = self.v.at(*path, "name")
            if (kind, i) in self.v.broken.standin_stages:
                stages.append(ir.Stage(s.name, i, None, (), 0, False, None, None, name_pos))
                continue  # it keeps its index; its own problems are reported already
            self.name_check(s.name, name_pos, "stage", reserved=False)
            if s.task is not None:
                self.name_check(s.task, self.v.at(*path, "task"), "task", reserved=False)
            if s.name in seen:
                first = seen[s.name]
                self.report(
                    name_pos,
                    "PC011",
                    f"stage '{s.name}' is defined twice in layer kind '{kind}' "
                    f"(first at {first.line}:{first.col})",
                )
            seen.setdefault(s.name, name_pos)
            reads = []
            for j, t in enumerate(s.reads):
                if self.tensor_ref(t, self.v.at(*path, "reads", j), tensors) is not None:
                    reads.append(t)
            stages.append(
                ir.Stage(
                    name=s.name,
                    index=i,
                    task=s.task,
                    reads=tuple(reads),
                    streams=parse_size(s.streams) if s.streams is not None else 0,
                    sdma=s.sdma,
                    group=s.group,
                    duration_us=s.duration_us,
                    pos=self.v.at(*path),
                )
            )
        by_name: dict[str, ir.Stage] = {}
        last_read: dict[str, int] = {}  # tensor -> the last stage reading it
        for stage in stages:
            by_name.setdefault(stage.name, stage)  # a duplicate stage name (PC011) keeps its first
            last_read.update(dict.fromkeys(stage.reads, stage.index))
        warms = [
            self.resolve_warm(kind, i, raw, (stages, by_name, last_read), tensors)
            for i, raw in enumerate(layer.warms)
        ]
        complete = not any(k == kind for k, _ in self.v.broken.standin_stages)
        return ir.Layer(kind, tuple(stages), tuple(warms), self.v.key_at("layers", kind), complete)

    def resolve_warm(
        self,
        kind: str,
        i: int,
        w: model.Warm,
        layer: tuple[list[ir.Stage], dict[str, ir.Stage], dict[str, int]],
        tensors: dict[str, ir.Tensor],
    ) -> ir.Warm:
        stages, by_name, last_read = layer  # indexed once per layer kind, not per warm
        path = ("layers", kind, "warms", i)
        allow = {rid: self.v.at(*path, "allow", k) for k, rid in enumerate(w.allow or ())}
        self.silences += [(rid, pos, f"allow on warm '{w.name}'") for rid, pos in allow.items()]
        name_pos = self.v.at(*path, "name")
        self.name_check(w.name, name_pos, "warm", reserved=True)
        if w.name_hint is not None:
            self.name_check(w.name_hint, self.v.at(*path, "name_hint"), "name_hint", reserved=False)
        after_pos = self.v.at(*path, "after")
        anchor = by_name.get(w.after)
        if anchor is None and (kind, w.after) not in self.v.broken.stages:
            self.report(
                after_pos,
                "PC010",
                f"unknown stage '{clip(w.after)}' in layer kind '{kind}'",
                self.suggest(w.after, by_name),
            )
        entries: list[ir.WarmEntry] = []
        seen: dict[str, Pos] = {}
        for j, item in enumerate(w.tensors):
            item_path = (*path, "tensors", j)
            name = item if isinstance(item, str) else item.tensor
            pos = (
                self.v.at(*item_path) if isinstance(item, str) else self.v.at(*item_path, "tensor")
            )
            if name in seen:
                first = seen[name]
                self.report(
                    pos,
                    "PC011",
                    f"tensor '{name}' is listed twice in warm '{w.name}' "
                    f"(first at {first.line}:{first.col})",
                )
                continue
            seen[name] = pos
            tensor = self.tensor_ref(name, pos, tensors)
            if tensor is None:
                continue
            flat = tensor.flat
            if not isinstance(item, str) and item.flat is not None:
                try:
                    flat = self.flat_view(item.flat, (*item_path, "flat"), name)
                except _Unresolved:
                    continue
            entries.append(ir.WarmEntry(tensor, flat, pos))
        # Alive from the stage after the anchor through the last stage reading any
        # of its static tensors (dynamic ones count for nothing but PC020).
        held = {e.tensor.name for e in entries if e.tensor.static}
        live = (1, 0)  # an unknown anchor: alive nowhere, but its tensors are still checked
        if anchor is not None:
            later = [last_read[t] for t in held if last_read.get(t, -1) > anchor.index]
            live = (anchor.index + 1, max(later, default=len(stages) - 1))
        return ir.Warm(
            name=w.name,
            name_hint=w.name_hint or w.name,
            layer=kind,
            anchor=anchor.index if anchor is not None else None,
            entries=tuple(entries),
            live=live,
            allow=allow,
            reason=w.reason,
            name_pos=name_pos,
            after_pos=after_pos,
            tensors_pos=self.v.at(*path, "tensors"),
        )

    # -- namespaces and forward --------------------------------------------------------------

    def check_namespace(self, tensors: dict[str, ir.Tensor], layers: dict[str, ir.Layer]) -> None:
        """Dims, used config keys, tensors and warms share one namespace (PC011)."""
        defined: list[tuple[Pos, str, str]] = []
        defined += [(self.v.key_at("dims", n), n, "dim") for n in self.plan.dims]
        defined += [(self.v.key_at("tensors", n), n, "tensor") for n in self.plan.tensors]
        for kind, layer in self.plan.layers.items():
            defined += [
                (self.v.at("layers", kind, "warms", i, "name"), w.name, "warm")
                for i, w in enumerate(layer.warms)
            ]
        owner: dict[str, tuple[Pos, str]] = {n: (Pos(0, 0), "config key") for n in self.config_used}
        for pos, name, what in sorted(defined, key=lambda d: (d[0].line, d[0].col)):
            if name in owner:
                first_pos, first_what = owner[name]
                where = f" (at {first_pos.line}:{first_pos.col})" if first_pos.line else ""
                self.report(
                    pos,
                    "PC011",
                    f"{what} '{name}' has the same name as {first_what} '{name}'{where}",
                    "dims, config keys, tensors and warms share one namespace",
                )
            else:
                owner[name] = (pos, what)

    def resolve_forward(self, layers: dict[str, ir.Layer]) -> ir.Forward | None:
        fwd = self.plan.forward
        if fwd is None:
            return None
        kinds: list[str] = []
        ok = True

        def kind_ref(name: str, pos: Pos) -> bool:
            if name in layers:
                return True
            b = self.v.broken
            if name not in b.kinds and not b.all_kinds:
                self.report(
                    pos, "PC010", f"unknown layer kind '{clip(name)}'", self.suggest(name, layers)
                )
            return False

        if isinstance(fwd, list):
            for i, entry in enumerate(fwd):
                name = entry if isinstance(entry, str) else entry.layer
                pos = (
                    self.v.at("forward", i)
                    if isinstance(entry, str)
                    else self.v.at("forward", i, "layer")
                )
                repeat: int | None = 1
                if not isinstance(entry, str):
                    try:
                        _, repeat = self.evaluate(
                            entry.repeat, self.v.at("forward", i, "repeat"), "repeat"
                        )
                    except _Unresolved:
                        ok = False
                        continue
                if repeat is None:
                    self.report(
                        self.v.at("forward", i, "repeat"),
                        "PC014",
                        f"repeat of forward entry {i} is dynamic: a forward has a fixed length",
                    )
                if not kind_ref(name, pos) or repeat is None:
                    ok = False
                    continue
                if len(kinds) + repeat > MAX_FORWARD_LAYERS:
                    self.report(
                        self.v.at("forward", i),
                        "PC014",
                        f"forward has more than {MAX_FORWARD_LAYERS:,} layers at entry {i}",
                    )
                    return None
                kinds.extend([name] * repeat)
            # An item dropped after a schema error leaves the count unknown.
            complete = ok and not self.v.broken.forward
            return ir.Forward(tuple(kinds), self.v.at("forward")) if complete else None
        return self.forward_from_config(fwd, kind_ref)

    def forward_from_config(
        self, fwd: model.ForwardFromConfig, kind_ref: Callable[[str, Pos], bool]
    ) -> ir.Forward | None:
        """Every check that does not depend on another's outcome runs and reports: the
        kinds, `layers`, the list's values, `layers` against the list's length, and each
        value without a kind (once, at the first layer it occurs at)."""
        key = fwd.from_config
        key_pos = self.v.at("forward", "from_config")
        known = [kind_ref(k, self.v.at("forward", "kinds", v)) for v, k in fwd.kinds.items()]
        count = self.forward_layers(fwd)
        values = self.config_list(key, key_pos)
        if values is None or count is False:  # no list, or unknown how much of it to take
            return None
        ok = all(known) and all(_is_int(v) for v in values)
        if count is not None and count > len(values):
            self.report(
                self.v.at("forward", "layers"),
                "PC014",
                f"forward.layers is {count}, but '{key}' has only {len(values)} entries: "
                f"layer {len(values)} has none",
            )
            ok = False
        taken = len(values) if count is None else min(count, len(values))
        if taken > MAX_FORWARD_LAYERS:
            where = "forward.layers" if count is not None else f"'{key}'"
            self.report(
                self.v.at("forward", "layers") if count is not None else key_pos,
                "PC014",
                f"{where} gives a forward of {taken:,} layers, more than {MAX_FORWARD_LAYERS:,}",
            )
            return None
        if self.v.broken.forward:  # a dropped `kinds` entry may be the one a value lacks
            return None
        kinds_by_value = {int(k): v for k, v in fwd.kinds.items()}
        unmapped: dict[int, list[int]] = {}  # value -> the layers it is at
        for index, value in enumerate(values[:count]):
            if _is_int(value) and value not in kinds_by_value:
                unmapped.setdefault(value, []).append(index)
        for value, at in unmapped.items():
            where = f"layer {at[0]}"
            if len(at) > 1:
                where = f"first at {where}, {len(at)} layers in all"
            self.report(
                key_pos,
                "PC014",
                f"'{key}' value {value} ({where}) has no layer kind in forward.kinds",
                f"add `{value}: <layer kind>` to forward.kinds",
            )
        if not ok or unmapped:
            return None
        return ir.Forward(tuple(kinds_by_value[v] for v in values[:count]), self.v.at("forward"))

    def forward_layers(self, fwd: model.ForwardFromConfig) -> int | Literal[False] | None:
        """`forward.layers` (None: absent, take the whole list; False: reported bad)."""
        if fwd.layers is None:
            return None
        layers_pos = self.v.at("forward", "layers")
        try:
            _, n = self.evaluate(fwd.layers, layers_pos, "forward.layers")
        except _Unresolved:
            return False
        if n is None:
            self.report(
                layers_pos, "PC014", "forward.layers is dynamic: a forward has a fixed length"
            )
            return False
        return n

    def config_list(self, key: str, pos: Pos) -> list[Any] | None:
        """The config's list under ``key``, its first non-integer reported; None after
        reporting why there is no list."""
        if self.config is None:
            if not self.config_broken:
                self.report(
                    pos, "PC010", f"unknown config key '{clip(key)}': the plan has no `config`"
                )
            return None
        if key not in self.config:
            lists = [k for k, v in self.config.items() if isinstance(v, list)]
            self.report(pos, "PC010", f"unknown config key '{clip(key)}'", self.suggest(key, lists))
            return None
        values = self.config[key]
        if not isinstance(values, list):
            got = clip(json.dumps(values))
            self.report(pos, "PC014", f"config key '{key}' is {got}, not a list of integers")
            return None
        for index, value in enumerate(values):
            if not _is_int(value):
                self.report(
                    pos,
                    "PC014",
                    f"'{key}' value {clip(json.dumps(value))} (layer {index}) is not an integer",
                )
                break
        return values


_CYCLE_SHOWN = 8  # a longer cycle is named by its first few dims and its length


def _cycle_text(cycle: list[str]) -> str:
    """``A -> B -> A``; for a cycle through hundreds of dims, a bounded part of it."""
    names = [clip(name) for name in cycle]
    if len(names) > _CYCLE_SHOWN:
        names = [*names[:3], f"… ({len(names)} dims)"]
    return " -> ".join([*names, clip(cycle[0])])


def _too_many(values: tuple[int | None, ...]) -> bool:
    """Whether the static entries multiply to more than an int64 holds."""
    total = 1
    for value in values:
        total *= value or 1
        if total > ex.MAX_VALUE:
            return True
    return False


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
