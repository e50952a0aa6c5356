"""The model-code reader on code no plan was tuned to (issue 41, docs/sources.md).

Each case is a small fixture in pypto-lib's idioms, written for these tests:

- calls/: calls and callers resolved as Python resolves them (the module's own scope,
  then its imports), beside a sibling module whose functions bear the same names;
  a call resolved to nothing readable is a notice, never a guess.
- flow/: order carried by values: a tile one scope computes and the next assembles, a
  row assembled into a tensor outside any kernel and read by a later one; no order
  where a scope binds the name again first, or uses it as a comprehension's own.
"""

from __future__ import annotations

from pathlib import Path

from plancc.source.reader import read_layer

DATA = Path(__file__).parent / "data" / "source"


def test_callers_are_the_functions_python_would_call() -> None:
    """`w` takes the host's shape through this module's own `device_fwd`, `v` an entry's
    that calls `lay._layer` (`import layer as lay`); never the shapes of a_decoy.py,
    whose `_layer` and `device_fwd` are its own, though read first."""
    work = DATA / "calls"
    r = read_layer(str(work / "layer.py"), "_layer", str(work))
    shapes = {n: (p.values, p.dtype, p.origin) for n, p in r.params.items() if p.bare}
    assert shapes == {
        "w": ((64, 64), "bf16", "layer.py:41"),
        "v": ((64, 64), "bf16", "c_entry.py:15"),
        "scratch": ((), None, ""),
    }
    # `kern.proj` is the helper of the module imported whole; `ghost.log` resolves to
    # nothing: one kernel that may touch what it is given, and a notice.
    assert [(k.name, k.opaque) for k in r.kernels] == [("proj", False), ("mix", False), ("", True)]
    assert [(u.file, u.line, u.what) for u in r.unresolved] == [
        ("layer.py", 29, "call of 'ghost.log' is resolved to no function the reader can read"),
        (
            "b_late.py",
            22,
            "call of '_layer' in late_host() is resolved to no function the reader can read",
        ),
    ]
    assert r.unresolved[1].effect == "the shapes it may pass are not taken"


def test_order_through_values() -> None:
    work = DATA / "flow"
    r = read_layer(str(work / "layer.py"), "attend", str(work))
    names = [k.name for k in r.kernels]
    assert names == ["q_proj", "q_write", "k_proj", "score", "out_proj"]
    waits = {k.name: sorted(names[i] for i in k.deps | k.after) for k in r.kernels}
    assert waits == {
        "q_proj": [],
        "q_write": ["q_proj"],  # `acc`, computed in q_proj
        "k_proj": [],  # its own `acc`, bound before it is used; `k0` a comprehension's
        "score": ["k_proj", "q_write"],
        "out_proj": ["score"],  # `attn`, assembled outside kernels from `row`
    }
