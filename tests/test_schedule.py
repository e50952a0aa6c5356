"""plancc.schedule: a layer kind's stages as a graph of `deps`."""

from __future__ import annotations

import pytest

from plancc.schedule import schedule


def test_without_deps_the_schedule_is_the_list_order() -> None:
    s = schedule([None, None, None, None])
    assert s.linear
    assert s.start == (0, 1, 2, 3)
    assert s.runs_before(0, 3)
    assert not s.runs_before(3, 0)
    assert s.between(0, 3) == [1, 2]
    assert s.lanes == (0, 0, 0, 0)


def test_a_fan_out_runs_beside() -> None:
    # rms_norm -> {q_a -> q_b, kv} -> attn (waits for both)
    s = schedule([None, [0], [1], [0], [2, 3]])
    assert not s.linear
    assert s.start == (0, 1, 2, 1, 3)
    assert s.beside(1, 3)
    assert s.beside(2, 3)
    assert s.runs_before(0, 4)
    assert s.runs_before(3, 4)
    assert not s.runs_before(3, 2)
    # between q_a's finish (step 2) and attn's start (step 3): q_b only
    assert s.between(1, 4) == [2]
    # between rms_norm's finish (1) and attn's start (3): q_a, q_b and kv
    assert s.between(0, 4) == [1, 2, 3]
    assert s.order() == [0, 1, 3, 2, 4]
    assert s.lanes == (0, 0, 0, 1, 0)


def test_empty_deps_start_at_layer_entry() -> None:
    s = schedule([None, None, []])
    assert s.start == (0, 1, 0)
    assert s.beside(0, 2)
    assert s.beside(1, 2)


def test_a_dep_on_a_later_stage_is_refused() -> None:
    with pytest.raises(ValueError, match="not listed before"):
        schedule([None, [1]])
