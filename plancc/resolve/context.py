"""The state resolution shares: diagnostics, dim values, the config, what is broken.

``Context`` also evaluates dim expressions (names meet dims and config keys
here) and reports once: the parts of resolve (dims, tensors, layers, forward,
namespace) are functions of a context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from plancc import codes, fixes, ir
from plancc import expr as ex
from plancc.codes import Code
from plancc.diagnostics import Diagnostic, Pos, diag
from plancc.load import FileReader, PathT, read_config_file
from plancc.schema import plan as model
from plancc.tables.names import closest, identifier_problem
from plancc.text import clip, json_kind
from plancc.validate import Validated

# Dim expressions, resolved: their source as rendered, values (None: dynamic), the
# names they use, and the parsed expressions.
Exprs = tuple[tuple[str, ...], tuple[int | None, ...], frozenset[str], list[ex.Expr]]


class Unresolved(Exception):
    """A name in an expression is already known to be broken: stay silent."""


@dataclass
class Context:
    v: Validated
    plan: model.Plan
    read_file: FileReader = read_config_file  # how the config file is read
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Which value each param takes in this check: "default", "lo" or "hi", unless
    # ``overrides`` (`--set NAME=VALUE`) fixes it.
    point: str = "default"
    overrides: Mapping[str, int] = field(default_factory=dict)
    dim_values: dict[str, int | None] = field(default_factory=dict)  # dims' and params'
    # The params each dim and param depends on (a param on itself): PC020's "uses a param".
    param_deps: dict[str, frozenset[str]] = field(default_factory=dict)
    params: list[ir.Param] = field(default_factory=list)
    config: dict[str, Any] | None = None
    config_broken: bool = False
    config_used: dict[str, int] = field(default_factory=dict)
    config_file: tuple[str, str] | None = None  # (path, sha256), for source.config
    broken_tensors: set[str] = field(default_factory=set)
    silences: list[ir.Silence] = field(default_factory=list)
    reported: set[Diagnostic] = field(default_factory=set)
    suggestions_left: int = 100
    # The names that passed name_check, indexed by its ``reserved``: a bad name is
    # reported at each use, a good one is checked once.
    good_names: tuple[set[str], set[str]] = field(default_factory=lambda: (set(), set()))

    @property
    def file(self) -> str:
        return self.v.doc.file

    def report(
        self,
        pos: Pos,
        code: Code,
        message: str,
        hint: str | None = None,
        fix: fixes.Fix | None = None,
    ) -> None:
        d = diag(self.file, pos, code, message, hint, fix=fix)
        if d not in self.reported:  # e.g. one bad config key used by several dims
            self.reported.add(d)
            self.diagnostics.append(d)

    def unknown(self, pos: Pos, message: str, name: str, candidates: Iterable[str]) -> None:
        """PC010 at ``pos``: its hint names the closest candidate, and where the node there
        is the name itself, its fix replaces it (unsafe: a guess at what was meant). Only
        the first few unknown names get one: each costs a scan of every candidate, and a
        plan with thousands of typos must stay linear."""
        self.suggestions_left -= 1
        close = closest(name, candidates) if self.suggestions_left >= 0 else None
        if close is None:
            self.report(pos, codes.UNKNOWN_NAME, message)
            return
        path = self._name_path(pos, name)
        fix = None
        if path is not None and not self._listed(path, close):
            title = f"replace '{name}' with '{close}'"
            fix = fixes.replace(path, close, title, fixes.Safety.UNSAFE)
        self.report(pos, codes.UNKNOWN_NAME, message, f"did you mean '{close}'?", fix)

    def _name_path(self, pos: Pos, name: str) -> PathT | None:
        """The path of the node at ``pos`` whose value is ``name``: a whole name, not a
        name inside an expression."""
        paths = self._paths_at.get(pos, ())
        return next((p for p in paths if _value(self.v.doc.data, p) == name), None)

    def _listed(self, path: PathT, name: str) -> bool:
        """Whether the list the name at ``path`` is an item of (`reads`, `deps`, a warm's
        `tensors`) lists ``name`` already: replacing it would list it twice (PC011)."""
        at = path[:-2] if path[-1] == "tensor" else path[:-1]
        items = _value(self.v.doc.data, at)
        if not isinstance(items, list) or at[-1:] not in (("reads",), ("deps",), ("tensors",)):
            return False
        return any(i == name or (isinstance(i, dict) and i.get("tensor") == name) for i in items)

    @cached_property
    def _paths_at(self) -> dict[Pos, list[PathT]]:
        """Every node's paths by where its value starts: built once, on the first
        unknown name with a close candidate."""
        values = self.v.doc.values
        out: dict[Pos, list[PathT]] = {}
        for path in values:
            out.setdefault(values[path], []).append(path)
        return out

    def name_check(self, name: str, pos: Pos, what: str, *, reserved: bool) -> bool:
        return self.name_check_at(name, lambda: pos, what, reserved=reserved)

    def name_check_at(
        self, name: str, pos: Callable[[], Pos], what: str, *, reserved: bool, private: bool = False
    ) -> bool:
        """``name_check``, with the position worked out only for a report: a plan of
        10,000 warms names 40,000 things, and each position costs a lookup. ``private``:
        the name may start with '_' (a task); such a name is not remembered as good."""
        if name in self.good_names[reserved]:
            return True  # stage and task names repeat in every layer kind
        problem = identifier_problem(name, reserved=reserved, private=private)
        if problem is None:
            if not name.startswith("_"):
                self.good_names[reserved].add(name)
        else:
            self.report(
                pos(), codes.BAD_IDENTIFIER, f"{what} {problem}", "names reach generated code"
            )
        return problem is None

    @cached_property
    def names_known(self) -> list[str]:
        """Every name an expression may use (read after the config is loaded)."""
        config = [k for k, v in (self.config or {}).items() if is_int(v)]
        return [*self.plan.dims, *self.plan.params, *config]

    @cached_property
    def plan_order(self) -> dict[str, int]:
        """Each dim's index in the plan, then each param's."""
        return {name: i for i, name in enumerate([*self.plan.dims, *self.plan.params])}

    def depends_on(self, names: Iterable[str]) -> frozenset[str]:
        """The params that expressions naming ``names`` depend on, through dims."""
        return frozenset().union(*(self.param_deps.get(n, ()) for n in names))

    def lookup(self, name: str, pos: Pos) -> int | None:
        if name in self.plan.dims or name in self.plan.params:
            # Dims are resolved in dependency order before anything uses them, so a dim
            # without a value is broken (reported already) and never still to be resolved.
            if name not in self.dim_values:
                raise Unresolved
            return self.dim_values[name]
        if name in self.v.broken.dims or self.v.broken.all_dims:
            raise Unresolved
        if self.config is not None and name in self.config:
            value = self.config[name]
            if not is_int(value):
                self.report(
                    self.v.at("config"),
                    codes.CONFIG_FILE,
                    f"config key '{clip(name)}' is used as a dim but is {clip(json_kind(value))}, "
                    "not an integer",
                )
                raise Unresolved
            if not self.name_check(name, pos, "config key", reserved=True):
                raise Unresolved
            self.config_used[name] = value
            return int(value)
        if self.config_broken or self.v.broken.all_dims:
            raise Unresolved
        self.unknown(pos, f"unknown dim '{clip(name)}'", name, self.names_known)
        raise Unresolved

    def evaluate(self, source: int | str, pos: Pos, what: str) -> tuple[ex.Expr, int | None]:
        """Parse and evaluate one dim expression; Unresolved after reporting why not."""
        try:
            parsed = ex.parse(source)
            value = ex.evaluate(parsed, lambda n: self.lookup(n, pos))
        except ex.ExprError as exc:
            self.report(pos, codes.BAD_EXPRESSION, f"{what}: {exc}")
            raise Unresolved from None
        if value is not None and value < 1:
            self.report(
                pos, codes.BAD_EXPRESSION, f"{what} '{source}' is {value}; a dimension must be ≥ 1"
            )
            raise Unresolved
        return parsed, value

    def exprs(self, sources: list[int | str], path: PathT, what: str) -> Exprs | None:
        texts: list[str] = []
        values: list[int | None] = []
        names: set[str] = set()
        parsed: list[ex.Expr] = []
        ok = True
        for i, source in enumerate(sources):
            if type(source) is int and 1 <= source <= ex.MAX_VALUE:
                # A literal that parses, evaluates and renders as itself, and names nothing:
                # no position is needed.
                texts.append(str(source))
                values.append(source)
                parsed.append(ex.Num(source))
                continue
            try:
                e, value = self.evaluate(source, self.v.at(*path, i), what)
            except Unresolved:
                ok = False
                continue
            texts.append(ex.render(e))
            values.append(value)
            names.update(ex.names(e))
            parsed.append(e)
        if not ok:
            return None
        return tuple(texts), tuple(values), frozenset(names), parsed


def _value(data: Any, path: PathT) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def too_many(values: tuple[int | None, ...]) -> bool:
    """Whether the static entries multiply to more than an int64 holds."""
    total = 1
    for value in values:
        total *= value or 1
        if total > ex.MAX_VALUE:
            return True
    return False


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
