"""A candidate judged over its params' ranges, as `validate` judges a plan; and the guard
where a gain stops being one.

`validate` checks a plan with `params` at the values the run takes (the defaults, or
`--set`), then with every param `--set` does not fix at the low end of its range, then
at the high end; a guarded warm at the values nearest those that its guards admit
(``plancc.facts.admitted``). `suggest` judges each candidate so: its findings at the
run's values, then those found only at an end, each saying at which values (``at
CTX=4096``), as `validate` reports them. The numbers a rank compares (what lands, what
streams beside it) are those at the run's values.

A candidate whose class flips inside one param's range (the others as the run has
them) is guarded where it is a gain: a gain at the run's values that is none at an end,
or none at the run's values that is one at an end. The last value at which it is still
a gain is found by bisection, the class at each value the real check's, and the
candidate guarded there (`guard: CTX <= 2272`; `>=` where the gain is toward the high
end) is one more candidate, judged like any other. A param the run fixes (`--set`) is
never guarded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from plancc import ir
from plancc.facts.admitted import clip
from plancc.suggest.candidates import Candidate, Setting, World
from plancc.suggest.evaluate import Evaluation, Judged, evaluate
from plancc.suggest.rank import GAIN, klass

Values = tuple[tuple[str, int], ...]  # (param, value) pairs, in plan order


@dataclass
class Ranges:
    """The plan at every value a candidate is judged at, each resolved once."""

    main: World  # at the run's values
    resolve_at: Callable[[Mapping[str, int]], ir.Plan | None]  # the plan at these values
    fixed: frozenset[str]  # the params `--set` fixes
    worlds: dict[Values, World | None] = field(default_factory=dict)
    settings: dict[tuple[Values, str], Setting | None] = field(default_factory=dict)

    @property
    def params(self) -> tuple[ir.Param, ...]:
        return self.main.plan.params

    @property
    def values(self) -> Values:
        return tuple((p.name, p.value) for p in self.params)

    def ranged(self) -> list[ir.Param]:
        return [p for p in self.params if p.name not in self.fixed and p.lo != p.hi]

    def ends(self) -> list[Values]:
        """The values `validate` checks besides the run's: every param the run does not fix
        at the low end of its range, then at the high end."""
        ranged = {p.name for p in self.ranged()}
        if not ranged:
            return []
        return [
            tuple((p.name, getattr(p, end) if p.name in ranged else p.value) for p in self.params)
            for end in ("lo", "hi")
        ]

    def setting(self, base: Setting, values: Values) -> Setting | None:
        """The layer kind of ``base`` at ``values``; None when the plan does not resolve
        there (never, for values within the ranges)."""
        if values == self.values:
            return base
        key = (values, base.layer.name)
        if key not in self.settings:
            if values not in self.worlds:
                plan = self.resolve_at(dict(values))
                self.worlds[values] = None if plan is None else World(plan)
            world = self.worlds[values]
            layer = None if world is None else world.plan.layers.get(base.layer.name)
            self.settings[key] = (
                None
                if world is None or layer is None or not layer.complete
                else Setting(world.plan, layer, world.line(layer.name), world=world, away=True)
            )
        return self.settings[key]

    def clip(self, c: Candidate, values: Values) -> Values | None:
        """``values`` with each param a guard of ``c`` compares clipped into what its guards
        admit (a split: what every one of its warms' guards admits); None when they admit
        no value of the range, or skip a value `--set` fixes."""
        guards = [g for p in c.parts for g in p.guards]
        if not guards:
            return values
        params = {p.name: p for p in self.params}
        out = clip(guards, params, dict(values), self.fixed)
        return None if out is None else tuple(out.items())

    def judge(self, s: Setting, c: Candidate) -> tuple[Evaluation, Evaluation] | None:
        """``c`` judged at the run's values (clipped to its guards) and at the ends of the
        ranges: those findings merged into the first, each once, from the first values where
        it appears; and the evaluation at the run's values alone. None when a guard skips
        the run's values of a param `--set` fixes: it is not issued in this run."""
        main = self.clip(c, self.values)
        at = None if main is None else self.setting(s, main)
        if at is None:
            return None
        first = evaluate(at, c)
        merged = first
        for end in self.ends():
            values = self.clip(c, end)
            other = None if values is None or values == main else self.setting(s, values)
            if other is not None:
                merged = _merge(merged, evaluate(other, c))
        return merged, first

    def flips(
        self, s: Setting, c: Candidate, merged: Evaluation, first: Evaluation
    ) -> Iterator[Candidate]:
        """The candidate guarded where it is a gain, for each param whose range it stops
        being one inside (``merged``: no gain over the ranges; ``first``: its class at the
        run's values). A gain at the run's values is guarded up to (down to) the last value
        toward each end where it still is one; a candidate that is no gain at the run's
        values but is one at an end is guarded from that end to the last value toward the
        run's where it still is one (its guard skips the run's values)."""
        if klass(merged) == GAIN:
            return
        at_run = klass(first) == GAIN
        guarded = {g[0] for p in c.parts for g in p.guards}
        for p in self.ranged():
            if p.name in guarded:
                continue
            for end in (p.hi, p.lo):
                if end == p.value:
                    continue
                if at_run:
                    bound = self._flip(s, c, p, p.value, end)
                    up = end > p.value
                elif self._gain(s, c, p, end):
                    bound = self._flip(s, c, p, end, p.value)
                    up = end < p.value
                else:
                    continue
                if bound is not None:
                    yield c.guarded((p.name, "<=" if up else ">=", bound))

    def _flip(self, s: Setting, c: Candidate, p: ir.Param, good: int, bad: int) -> int | None:
        """The last value from ``good`` (a gain) toward ``bad`` at which ``c`` is still a
        gain, the others at the run's values; None when it is one at ``bad`` too."""
        if self._gain(s, c, p, bad):
            return None
        while abs(bad - good) > 1:
            mid = (good + bad) // 2
            good, bad = (mid, bad) if self._gain(s, c, p, mid) else (good, mid)
        return good

    def _gain(self, s: Setting, c: Candidate, p: ir.Param, value: int) -> bool:
        values = self.clip(c, tuple((n, value if n == p.name else v) for n, v in self.values))
        at = None if values is None else self.setting(s, values)
        return at is not None and klass(evaluate(at, c)) == GAIN


def _merge(e: Evaluation, other: Evaluation) -> Evaluation:
    """``e`` with the findings of ``other`` (at other values) it does not have: a code at a
    place, once, as `validate` reports a finding once."""

    def key(f: Judged) -> tuple[str, tuple[int, int]]:
        return (f.code, f.where)

    seen = {key(f) for f in e.findings}
    kept = {key(f) for f in e.allowed}
    return replace(
        e,
        findings=(*e.findings, *(f for f in other.findings if key(f) not in seen)),
        allowed=(*e.allowed, *(f for f in other.allowed if key(f) not in kept)),
    )
