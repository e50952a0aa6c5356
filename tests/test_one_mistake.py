"""One mistake, one finding (issue 39): a misspelt name a plan refers to (in a stage's
`deps` or `reads`, a warm's `after` or `tensors`, a forward item) gives its PC010 and no
finding that follows only from it: the rules that would judge a graph, readers, a warm
or a peak that are not the plan's wait for the error."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import pytest

from plancc.api import diagnose_plan
from plancc.load.inputs import PlanInput
from tests import fix_sweep

ROOT = Path(__file__).resolve().parent.parent
FLASH = ROOT / "plans" / "deepseek_v4_flash.yaml"
CASES = sorted((ROOT / "tests" / "cases").rglob("*.yaml"))
PLANS = sorted((ROOT / "plans").glob("*.yaml"))


def _codes(plan: Path, raw: bytes) -> collections.Counter[str]:
    return collections.Counter(
        d.code for d in diagnose_plan(PlanInput(str(plan), plan), raw).diagnostics
    )


def _more(plan: Path) -> list[tuple[str, dict[str, int]]]:
    """Each misspelling of the plan with the codes it adds beyond one PC010."""
    raw = plan.read_bytes()
    before = _codes(plan, raw)
    out = []
    for where, mutant, _, typo in fix_sweep.mutants(raw):
        more = _codes(plan, mutant) - before - collections.Counter({"PC010": 1})
        if more:
            out.append((f"{where}={typo}", dict(more)))
    return out


def test_a_misspelt_deps_name_is_one_finding() -> None:
    """The Flash plan with `deps: [q_proj, kv_cache_write]` misspelt gave PC010 and two
    PC040 and a PC105 per layer kind, all gone once the name was right."""
    text = FLASH.read_text("utf-8")
    source = PlanInput(str(FLASH), FLASH)
    before = {(d.code, d.message) for d in diagnose_plan(source, text.encode()).diagnostics}
    found = list(re.finditer(r"deps: \[(q_proj|sparse_attn|proj_a|proj_b)\b", text))
    assert len(found) == 10  # in each of the three kinds (csa: `q_proj` after `kv_cache_write`)
    for m in found:
        typo = text[: m.start(1)] + m.group(1) + "x" + text[m.end(1) :]
        got = diagnose_plan(source, typo.encode()).diagnostics
        new = [d for d in got if (d.code, d.message) not in before]
        assert [(d.code, d.hint) for d in new] == [("PC010", f"did you mean '{m.group(1)}'?")]
        assert new[0].fix is not None


def test_no_misspelling_adds_a_finding() -> None:
    """A warm's tensor or anchor misspelt left the kind's peak under the budget but over
    PC032's: PC032 in place of the plan's PC030 (the budget rules wait for the error)."""
    assert _more(ROOT / "tests" / "cases" / "rules" / "seed_graph_l2_table.yaml") == []


@pytest.mark.slow
@pytest.mark.parametrize("plan", [*CASES, *PLANS], ids=[p.name for p in [*CASES, *PLANS]])
def test_no_misspelling_adds_a_finding_anywhere(plan: Path) -> None:
    assert _more(plan) == []
