"""The source's order of kernels: which kernel runs before which, and each compared
stage's run of kernels (docs/sources.md)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from plancc.source.reading import Kernel, Reading


@dataclass
class Runs:
    """Each compared stage's run of kernels, and the source's order of those runs.

    A stage's `kernel` is the *head* of its run. Any other kernel joins the run of the
    last head, in program order, that it waits on (through `deps=`, task_dummy barriers
    or last writers, transitively); a kernel that waits on no head is in no run (a seed
    or a table the plan does not describe). So a run is never cut by the program order
    of kernels that interleave in the code: the q chain's kernels stay in `q_proj`'s run
    though the kv chain's are written between them. A later copy of an unrolled scope
    joins its first copy's run, unless it waits on a head after that run's own (a copy
    is another iteration of the same scope). Run Y runs before run X when a chain
    of runs leads from Y to X, each waiting (some kernel of it on some kernel of the
    previous one) on the one before: a plan stage waits for whole stages.
    """

    kernels: dict[int, list[Kernel]]  # stage index -> its run, in program order
    owner: dict[int, int]  # kernel index -> the stage whose run holds it
    unknown: set[int]  # stages whose run holds unresolved code (or nothing): not compared
    before: dict[int, int]  # stage index -> bit set of the stages whose runs run before it
    after: dict[int, int]  # stage index -> bit set of the stages whose runs run after it

    @cached_property
    def compared(self) -> int:
        """The bit set of the stages compared: those with a run known whole."""
        return sum(1 << i for i in self.kernels if i not in self.unknown)

    def runs_before(self, a: int, b: int) -> bool:
        return bool(self.before[b] >> a & 1)

    def direct(self, s: int, among: int = -1) -> list[int]:
        """The stages of ``among`` (a bit set; all by default) whose runs run before that
        of ``s`` with none of ``among`` between: the `deps` the source has, transitively
        reduced. The latest runs directly before; what runs before it is covered; the
        latest not covered is next: a step per direct dep, never a pair of stages (4,096
        stages in a row were cubic)."""
        direct: list[int] = []
        left = self.before[s] & among
        while left:
            j = left.bit_length() - 1
            direct.append(j)
            left &= ~(self.before[j] | (1 << j))
        return sorted(direct)


def stage_runs(
    reading: Reading, heads: dict[int, Kernel], *, loose: frozenset[int] = frozenset()
) -> Runs:
    """The runs of the stages whose `kernel` is ``heads[stage]`` (docs/sources.md).

    A kernel of ``loose`` (one that may be the kernel of a stage whose `kernel` is
    missing from the code: PC202) that would bring into the run it joins a wait the run
    has not got is a run of its own, of no stage: whether the run it would join waits
    so is then not known."""
    owner, alone = _owners(reading, heads, loose)
    kernels: dict[int, list[Kernel]] = {s: [] for s in heads}
    waits: dict[int, set[int]] = {s: set() for s in {*heads, *(o for o in owner if o is not None)}}
    for k in reading.kernels:
        s = owner[k.index]
        if s is None:
            continue
        if s in kernels:
            kernels[s].append(k)
        for d in k.deps | k.after:
            o = owner[d] if d < k.index else None
            if o is not None and o != s:
                waits[s].add(o)
    # An edge leads to a run whose head is earlier: the last head a kernel waits on is its.
    order = sorted(waits, key=lambda s: heads[s].index if s in heads else s - alone)
    waiters: dict[int, set[int]] = {s: set() for s in waits}
    for s, on in waits.items():
        for o in on:
            waiters[o].add(s)
    before, after = _reach(order, waits), _reach(order[::-1], waiters)
    # A run that is empty: another stage names the same kernel, and took it.
    unknown = {s for s, run in kernels.items() if not run or any(k.opaque for k in run)}
    held = {i: s for i, s in enumerate(owner) if s is not None and s in heads}
    return Runs(kernels, held, unknown, before, after)


def _owners(
    reading: Reading, heads: dict[int, Kernel], loose: frozenset[int]
) -> tuple[list[int | None], int]:
    """The run each kernel is in (None: none), in program order; and the number from which
    a kernel of ``loose`` in a run of its own is numbered (``alone`` + its index)."""
    stage_of = {k.index: s for s, k in heads.items()}
    alone = max(heads, default=-1) + 1
    owner: list[int | None] = []
    latest: list[int] = []  # the index of the last head each kernel waits on, -1: none
    reach: dict[int, int] = {}  # with ``loose``, each run's waits so far (a bit set)
    for k in reading.kernels:
        waited = [d for d in k.deps | k.after if d < k.index]
        last = max((max(d if d in stage_of else -1, latest[d]) for d in waited), default=-1)
        mine = stage_of.get(k.index, stage_of[last] if last >= 0 else None)
        first = owner[k.copy_of] if k.copy_of is not None and k.index not in stage_of else None
        if first in heads and last <= heads[first].index:
            # A later copy of an unrolled scope is in its first copy's run, as a loop's
            # iterations are one kernel's, unless it waits on a head after that run's.
            mine, last = first, heads[first].index
        elif loose and mine is not None:
            on = {o for d in waited if (o := owner[d]) is not None and o != mine}
            if k.index in loose and any(not reach.get(mine, 0) >> o & 1 for o in on):
                mine, last = alone + k.index, k.index  # a run of its own: a head of no stage
                stage_of[k.index] = mine
                on = {o for d in waited if (o := owner[d]) is not None}
            for o in on:
                reach[mine] = reach.get(mine, 0) | reach.get(o, 0) | 1 << o
        latest.append(last)
        owner.append(mine)
    return owner, alone


def _reach(order: list[int], edges: dict[int, set[int]]) -> dict[int, int]:
    """Each stage's bit set of the stages a path of ``edges`` leads to, ``order`` being an
    order in which every edge leads to an earlier stage."""
    out: dict[int, int] = {}
    for s in order:
        bits = 0
        for o in edges[s]:
            bits |= out[o] | (1 << o)
        out[s] = bits
    return out


def run_names(run: list[Kernel]) -> str:
    if len(run) == 1:
        return f"kernel {run[0].name}"
    if len(run) == 2:
        return f"kernels {run[0].name}, {run[1].name}"
    return f"kernels {run[0].name} … {run[-1].name}"
