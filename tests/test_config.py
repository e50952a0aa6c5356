"""`config:` files that cannot be used are PC005 at the `config` node, never a crash."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from plancc.api import validate_paths

PLAN = """\
plancc: 1
model: m
platform: a2a3
config: model.config.json
dims: {D: hidden_size}
tensors: {w: {shape: [D], dtype: bf16}}
layers: {a: {stages: [{name: s, reads: [w]}]}}
"""


def _codes(path: Path) -> list[tuple[str, int, int, str]]:
    report = validate_paths([str(path)])
    return [(d.code, d.line, d.col, d.message) for d in report.diagnostics]


def test_a_config_nested_too_deeply_is_pc005(write_plan: Callable[..., Path]) -> None:
    plan = write_plan(PLAN)
    depth = 200_000
    (plan.parent / "model.config.json").write_text(
        '{"hidden_size": 16, "x": ' + "[" * depth + "]" * depth + "}", encoding="utf-8"
    )
    assert _codes(plan) == [
        ("PC005", 4, 9, "config 'model.config.json' nests too deeply to read"),
    ]


def test_config_is_relative_to_the_plan_not_the_working_directory(
    write_plan: Callable[..., Path],
) -> None:
    plan = write_plan(PLAN)
    (plan.parent / "model.config.json").write_text('{"hidden_size": 16}', encoding="utf-8")
    assert _codes(plan) == []
    report = validate_paths([str(plan)])
    assert report.results[0].plan is not None
    assert report.results[0].plan.config == {"hidden_size": 16}


def test_a_config_past_4_mib_is_pc005_and_not_read_whole(
    write_plan: Callable[..., Path],
) -> None:
    plan = write_plan(PLAN)
    padding = " " * (4 * 1024 * 1024)
    (plan.parent / "model.config.json").write_text(
        '{"hidden_size": 16}' + padding, encoding="utf-8"
    )
    assert _codes(plan) == [
        ("PC005", 4, 9, "cannot read config 'model.config.json': larger than 4 MiB"),
    ]


def test_a_dangling_config_symlink_is_pc005_with_the_reason(
    write_plan: Callable[..., Path],
) -> None:
    plan = write_plan(PLAN)
    (plan.parent / "model.config.json").symlink_to(plan.parent / "missing.json")
    assert _codes(plan) == [
        ("PC005", 4, 9, "cannot read config 'model.config.json': No such file or directory"),
    ]
