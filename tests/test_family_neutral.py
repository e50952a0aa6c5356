"""The new keys of issue 35 change nothing where they say nothing new: a one-stage join is
its stage, a share of 1 a whole read, a `streams` expression its bytes, a param nothing
depends on no param, and a stacked tensor counts one slab. So a plan without them keeps
exactly the findings and the bytes it had (a property over random stage graphs)."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from plancc import render
from plancc.api import validate_paths
from plancc.facts import facts_of

_SIZES = {"t0": 1024, "t1": 4_000_000, "t2": 40_000_000, "t3": 60_000_000}  # bf16 elements
_STREAMS = {"150 MB": "150000000", "2 GiB": "2 * 1024 * 1024 * 1024"}


@st.composite
def _plans(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(2, 7))
    stages = [
        {
            "deps": sorted(draw(st.sets(st.integers(0, i - 1), max_size=3)) if i else set())
            if draw(st.booleans())
            else None,
            "task": draw(st.booleans()),
            "reads": draw(st.lists(st.sampled_from([*_SIZES, "dyn"]), unique=True, max_size=3)),
            "group": draw(st.sampled_from([None, "g"])),
            "duration_us": draw(st.sampled_from([None, 5, 50, 300])),
            "streams": draw(st.sampled_from([None, None, "150 MB", "2 GiB"])),
            "sdma": draw(st.booleans()) and draw(st.booleans()),
        }
        for i in range(n)
    ]
    warms = [
        (
            draw(st.integers(0, n - 1)),
            draw(st.lists(st.sampled_from(list(_SIZES)), min_size=1, max_size=3, unique=True)),
        )
        for _ in range(draw(st.integers(1, 3)))
    ]
    return {"stages": stages, "warms": warms}


def _text(p: dict[str, Any], *, neutral: bool = False, stacked: bool = False) -> str:
    lines = ["plancc: 1", "model: m", "platform: a2a3", "dims: {N: dynamic}"]
    if neutral:
        lines += ["params:", "  UNUSED_P: {default: 2, range: [1, 4]}"]
    lines.append("tensors:")
    stack = ", stacked: {layers: 3, index: layer_idx}" if stacked else ""
    lines += [f"  {t}: {{shape: [{k}], dtype: bf16{stack}}}" for t, k in _SIZES.items()]
    lines += ["  dyn: {shape: [N], dtype: bf16}", "layers:", "  k:", "    stages:"]
    for i, s in enumerate(p["stages"]):
        keys = [f"name: s{i}"]
        if s["deps"] is not None:
            keys.append(f"deps: [{', '.join(f's{d}' for d in s['deps'])}]")
        keys += [f"task: s{i}_tid"] if s["task"] else []
        reads = [f"{{tensor: {t}, share: 1}}" if neutral else t for t in s["reads"]]
        keys += [f"reads: [{', '.join(reads)}]"]
        keys += [f"{k}: {s[k]}" for k in ("group", "duration_us") if s[k] is not None]
        if s["streams"] is not None:
            keys.append(f"streams: {_STREAMS[s['streams']] if neutral else s['streams']}")
        keys += ["sdma: true"] if s["sdma"] else []
        lines.append(f"      - {{{', '.join(keys)}}}")
    lines.append("    warms:")
    for j, (at, ts) in enumerate(p["warms"]):
        after = f"[s{at}]" if neutral else f"s{at}"
        lines.append(f"      - {{name: w{j}, after: {after}, tensors: [{', '.join(ts)}]}}")
    return "\n".join(lines) + "\n"


def _outcome(text: str) -> tuple[list[tuple[str, str, str | None]], str, str]:
    """The findings (their places differ with the text), and for a plan without errors
    its module and manifest, with the plan's own hash (which differs too) taken out."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.yaml"
        path.write_text(text, "utf-8")
        report = validate_paths([str(path)])
    found = [(d.code, d.message, d.hint) for d in report.diagnostics]
    plan = report.results[0].plan
    if report.errors or plan is None:
        return found, "", ""
    files = render.render(plan, "plan.yaml", facts=facts_of(plan))
    module, manifest = files["m_warms.py"], json.loads(files["m_warms.manifest.json"])
    manifest["source"].pop("sha256")
    manifest.pop("module")
    return found, re.sub(r"Plan sha256: \w+", "", module), json.dumps(manifest)


@settings(max_examples=120, deadline=None)
@given(_plans())
def test_the_new_keys_said_neutrally_change_no_finding_and_no_byte(plan: dict[str, Any]) -> None:
    assert _outcome(_text(plan, neutral=True)) == _outcome(_text(plan))


@settings(max_examples=60, deadline=None)
@given(_plans())
def test_a_stacked_tensor_counts_one_slab_in_every_finding_and_number(
    plan: dict[str, Any],
) -> None:
    plain, stacked = _outcome(_text(plan)), _outcome(_text(plan, stacked=True))
    assert stacked[0] == plain[0]
    if plain[2]:
        numbers = json.loads(plain[2]), json.loads(stacked[2])
        for side in numbers:
            for warm in side["warms"]:
                warm.pop("parameters")  # a stack and its index are parameters: they differ
                for tensor in warm["tensors"]:
                    tensor.pop("stacked", None)
        assert numbers[0] == numbers[1]
