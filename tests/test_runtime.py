"""plancc.runtime: what a serving process does with a manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plancc import runtime
from plancc.api import build
from plancc.runtime import (
    MalformedManifestError,
    ManifestError,
    PlatformMismatchError,
    load_manifest,
    worker_options,
)
from plancc.tables.platforms import PLATFORMS

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_MANIFEST = ROOT / "tests" / "golden" / "deepseek_v4_flash_warms.manifest.json"

PLAN = """\
plancc: 1
model: demo
platform: {platform}
dims: {{D: 64, E: 32}}
tensors:
  wa: {{shape: [D, E], dtype: bf16}}
  wb: {{shape: [E], dtype: int8}}
layers:
  k:
    stages:
      - {{name: s0, task: s0_tid}}
      - {{name: s1}}
      - {{name: s2, reads: [wa, wb]}}
    warms: {warms}
"""
WARM = "[{name: w, after: s0, tensors: [wa, wb], allow: [PC107, PC104], reason: test}]"


def _manifest(tmp_path: Path, platform: str = "a2a3", warms: str = WARM) -> Path:
    plan = tmp_path / "demo.yaml"
    plan.write_text(PLAN.format(platform=platform, warms=warms), encoding="utf-8")
    result = build([str(plan)], str(tmp_path))
    assert result.exit_code == 0, [d.message for d in result.report.diagnostics]
    return tmp_path / "demo_warms.manifest.json"


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return _manifest(tmp_path)


def _data(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def test_load_a_good_manifest(good: Path) -> None:
    m = load_manifest(good)
    assert m.model == "demo"
    assert m.platform == "a2a3"
    assert m.enable_sdma is True
    assert m.source == str(good)
    assert [(w.name, w.after, w.task, w.tensors, w.bytes) for w in m.warms] == [
        ("w", "s0", "s0_tid", ("wa", "wb"), 64 * 32 * 2 + 32)
    ]
    m.check_platform("a2a3")
    assert m.worker_options() == {"enable_sdma": True}
    assert worker_options(good, "a2a3") == {"enable_sdma": True}
    assert worker_options(m, "a2a3") == {"enable_sdma": True}


def test_load_from_str_path_or_dict(good: Path) -> None:
    from_str = load_manifest(str(good))
    from_dict = load_manifest(_data(good))
    assert from_dict.source == "<dict>"
    assert from_str.warms == from_dict.warms == load_manifest(good).warms
    assert worker_options(_data(good), "a2a3") == {"enable_sdma": True}


def test_golden_manifest_loads() -> None:
    m = load_manifest(GOLDEN_MANIFEST)
    assert m.worker_options() == {"enable_sdma": True}
    assert m.warms


@pytest.mark.parametrize("running", ["a2a3sim", "a5", "a5sim", "A2A3"])
def test_platform_mismatch_names_both_platforms(good: Path, running: str) -> None:
    m = load_manifest(good)
    with pytest.raises(PlatformMismatchError) as info:
        m.check_platform(running)
    assert isinstance(info.value, ManifestError)
    assert info.value.manifest_platform == "a2a3"
    assert info.value.running_platform == running
    message = str(info.value)
    assert "'a2a3'" in message
    assert f"'{running}'" in message
    assert str(good) in message
    with pytest.raises(PlatformMismatchError):
        worker_options(good, running)


@pytest.mark.parametrize("running", ["a2a3sim", "a5", "a5sim"])
def test_mismatch_on_a_platform_without_sdma_says_warms_run_only_on_a2a3(
    good: Path, running: str
) -> None:
    assert not PLATFORMS[running].sdma
    with pytest.raises(PlatformMismatchError) as info:
        load_manifest(good).check_platform(running)
    message = str(info.value)
    assert f"was built for platform 'a2a3', but this process runs on '{running}'" in message
    assert "its warms run only on a2a3" in message
    assert f"'{running}' has none" in message
    assert "rebuild" not in message  # a plan for a platform without SDMA cannot warm (PC031)
    assert f"platform: {running}" not in message


def test_mismatch_on_a_platform_with_sdma_advises_a_rebuild(tmp_path: Path) -> None:
    assert PLATFORMS["a2a3"].sdma
    path = _manifest(tmp_path, platform="a5", warms="[]")
    with pytest.raises(PlatformMismatchError) as info:
        load_manifest(path).check_platform("a2a3")
    assert str(info.value) == (
        f"{path} was built for platform 'a5', but this process runs on 'a2a3': "
        "rebuild the plan with `platform: a2a3` or run on 'a5'"
    )


def test_mismatch_without_warms_may_rebuild_for_a_platform_without_sdma(tmp_path: Path) -> None:
    path = _manifest(tmp_path, platform="a2a3", warms="[]")
    with pytest.raises(PlatformMismatchError) as info:
        load_manifest(path).check_platform("a5")
    assert str(info.value).endswith(": rebuild the plan with `platform: a5` or run on 'a2a3'")


def test_mismatch_on_an_unknown_platform(good: Path) -> None:
    with pytest.raises(PlatformMismatchError) as info:
        load_manifest(good).check_platform("A2A3")
    assert str(info.value).endswith(
        "runs on 'A2A3': 'A2A3' is not a platform plancc knows (a2a3, a2a3sim, a5, a5sim); "
        "run on 'a2a3'"
    )


def test_manifest_without_warms(tmp_path: Path) -> None:
    path = _manifest(tmp_path, platform="a5", warms="[]")
    m = load_manifest(path)
    assert m.warms == ()
    assert worker_options(path, "a5") == {"enable_sdma": False}


def _broken(good: Path, edit: Any) -> dict[str, Any]:
    data = _data(good)
    edit(data)
    return data


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d.update(format="plancc-manifest/2"), 'expected "plancc-manifest/1"'),
        (lambda d: d.pop("format"), "format is null"),
        (lambda d: d.pop("runtime"), "'runtime' is a required property"),
        (lambda d: d["runtime"].update(enable_sdma="yes"), "at /runtime/enable_sdma"),
        (lambda d: d["warms"][0].update(bytes=-1), "at /warms/0/bytes"),
        (lambda d: d["warms"][0]["tensors"][0].update(dtype="bf17"), "/warms/0/tensors/0/dtype"),
        (lambda d: d.update(platform="a6"), "at /platform"),
        (lambda d: d.update(extra=1), "'extra' was unexpected"),
        (lambda d: d["runtime"].update(enable_sdma=False), "enable_sdma is false with 1 warm"),
        (lambda d: d.update(platform="a2a3sim"), "'a2a3sim' has no SDMA provider"),
    ],
)
def test_malformed_manifests(good: Path, edit: Any, expected: str) -> None:
    with pytest.raises(MalformedManifestError) as info:
        load_manifest(_broken(good, edit))
    assert isinstance(info.value, ManifestError)
    assert expected in str(info.value)


def test_unreadable_or_non_json_manifest(tmp_path: Path) -> None:
    with pytest.raises(MalformedManifestError, match="cannot read manifest"):
        load_manifest(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(MalformedManifestError, match="not a JSON manifest"):
        load_manifest(bad)
    array = tmp_path / "array.json"
    array.write_text("[]", encoding="utf-8")
    with pytest.raises(MalformedManifestError, match="a manifest is a JSON object"):
        load_manifest(array)


@pytest.mark.parametrize("text", ["[" * 200_000, '{"a": ' * 200_000])
def test_deeply_nested_json_is_malformed_not_a_recursion_error(tmp_path: Path, text: str) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(text, encoding="utf-8")
    with pytest.raises(
        MalformedManifestError, match=r"deep\.json: not a manifest: nested too deeply"
    ):
        load_manifest(deep)


def test_deeply_nested_document_is_malformed(good: Path) -> None:
    nested: list[Any] = []
    for _ in range(100_000):
        nested = [nested]
    data = _data(good)
    data["warms"][0]["tensors"][0]["name"] = nested
    with pytest.raises(MalformedManifestError, match=r"<dict>: not a manifest: nested too deeply"):
        load_manifest(data)


def test_public_names() -> None:
    assert set(runtime.__all__) <= set(dir(runtime))
