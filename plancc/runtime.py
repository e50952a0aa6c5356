"""Use a plancc manifest in a serving process: check the platform, build the worker right.

One-shot PyPTO execution reads a compiled artifact's SDMA requirement by
itself; a long-lived worker must opt in when it is built. The manifest that
``plancc build`` writes beside the generated module says whether it must::

    from plancc.runtime import load_manifest

    manifest = load_manifest("build/deepseek_v4_flash_warms.manifest.json")
    manifest.check_platform("a2a3")  # PlatformMismatchError on any other platform
    worker = ChipWorker(config=RunConfig(platform="a2a3", device_id=0),
                        **manifest.worker_options())

or in one call: ``worker_options(path, "a2a3")``. Nothing here imports PyPTO.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from plancc.reading import open_regular, read_regular
from plancc.tables.outputs import MANIFEST_FORMAT

__all__ = [
    "FORMAT",
    "MalformedManifestError",
    "Manifest",
    "ManifestError",
    "ModuleMismatchError",
    "PlatformMismatchError",
    "Warm",
    "load_manifest",
    "worker_options",
]

FORMAT = MANIFEST_FORMAT
# A manifest is a few kB per warm, its module a few more: anything this large is not one
# (and is not read past the limit).
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_MODULE_BYTES = 256 * 1024 * 1024


class ManifestError(Exception):
    """A manifest that this process must not use; the message says why."""


class MalformedManifestError(ManifestError, ValueError):
    """The manifest cannot be read, is not JSON, or does not match its schema."""


class ModuleMismatchError(ManifestError):
    """The generated module beside the manifest is not the one it was built with."""


class PlatformMismatchError(ManifestError):
    """The manifest was built for another platform than the one this process runs on."""

    def __init__(
        self, source: str, manifest_platform: str, running_platform: str, *, warms: bool = True
    ) -> None:
        self.source = source
        self.manifest_platform = manifest_platform
        self.running_platform = running_platform
        super().__init__(
            f"{source} was built for platform '{manifest_platform}', but this process runs "
            f"on '{running_platform}': {_advice(manifest_platform, running_platform, warms)}"
        )


def _advice(manifest_platform: str, running_platform: str, warms: bool) -> str:
    """What to do about a platform mismatch; true by the platform table (no warm without SDMA)."""
    from plancc.tables.platforms import PLATFORMS  # noqa: PLC0415 (generated modules import this; keep it light)

    running = PLATFORMS.get(running_platform)
    if running is None:
        return (
            f"'{running_platform}' is not a platform plancc knows ({', '.join(PLATFORMS)}); "
            f"run on '{manifest_platform}'"
        )
    if warms and not running.sdma:
        sdma = " and ".join(p.name for p in PLATFORMS.values() if p.sdma)
        return (
            f"its warms run only on {sdma}, where there is an SDMA provider, and "
            f"'{running_platform}' has none; run it on '{manifest_platform}' (a plan for "
            f"'{running_platform}' can declare no warm)"
        )
    return f"rebuild the plan with `platform: {running_platform}` or run on '{manifest_platform}'"


@dataclass(frozen=True)
class Warm:
    """One generated warm function, as the manifest describes it."""

    name: str
    layer: str
    name_hint: str
    after: str  # the anchor stage; for a join, the first (``anchors`` has every one)
    task: str  # its TaskId variable (``tasks`` for a join's)
    bytes: int
    tensors: tuple[str, ...]
    anchors: tuple[str, ...] = ()  # every anchor stage, in the plan's order
    tasks: tuple[str, ...] = ()  # every anchor's TaskId variable, in the same order
    # Issued in one layer for the next one's tensors: the model calls it in every layer but
    # the last (under `if layer_idx < NUM_LAYERS - 1:`), with the next layer's.
    next_layer: bool = False
    # Run-time guards, all of which must hold: (param, op, bound, the function's parameter).
    guards: tuple[tuple[str, str, int, str], ...] = ()


@dataclass(frozen=True)
class Manifest:
    source: str  # where it was loaded from: a path, or "<dict>"
    model: str
    platform: str
    enable_sdma: bool
    warms: tuple[Warm, ...]
    data: Mapping[str, Any]  # the whole document, as loaded

    def check_platform(self, platform: str) -> None:
        """Raise PlatformMismatchError unless the manifest is for ``platform``."""
        if platform != self.platform:
            raise PlatformMismatchError(
                self.source, self.platform, platform, warms=bool(self.warms)
            )

    def worker_options(self) -> dict[str, bool]:
        """Keyword arguments for the worker a serving process builds (``ChipWorker(...)``)."""
        return {"enable_sdma": self.enable_sdma}


def load_manifest(manifest: str | os.PathLike[str] | Mapping[str, Any]) -> Manifest:
    """Read and validate a manifest: a path to its JSON file, or the parsed document.

    From a path, the generated module beside it must be the one it was built with
    (``module.sha256``), else ModuleMismatchError."""
    if isinstance(manifest, Mapping):
        source, data = "<dict>", manifest
    else:
        source = os.fspath(manifest)
        try:
            data = json.loads(read_regular(source, MAX_MANIFEST_BYTES))
        except OSError as exc:
            raise MalformedManifestError(
                f"{source}: cannot read manifest: {exc.strerror or exc}"
            ) from None
        except ValueError as exc:
            raise MalformedManifestError(f"{source}: not a JSON manifest: {exc}") from None
        except RecursionError:
            raise MalformedManifestError(f"{source}: not a manifest: nested too deeply") from None
    try:
        parsed = _parse(source, data)
    except RecursionError:  # a deeply nested document (or dict): no manifest nests so deep
        raise MalformedManifestError(f"{source}: not a manifest: nested too deeply") from None
    if not isinstance(manifest, Mapping):
        _check_module(source, data["module"])
    return parsed


def _check_module(source: str, module: Mapping[str, str]) -> None:
    """Refuse a manifest whose module, beside it, is not the one it was built with:
    a build killed between its two renames leaves a new module and an old manifest."""
    path = os.path.join(os.path.dirname(source), module["file"])
    try:
        with open_regular(path, MAX_MODULE_BYTES) as f:
            actual = hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as exc:
        raise ModuleMismatchError(
            f"{source}: cannot read its module {path}: {exc.strerror or exc}"
        ) from None
    if actual != module["sha256"]:
        raise ModuleMismatchError(
            f"{source}: {path} is not the module this manifest was built with (sha256 "
            f"{actual[:12]}…, expected {module['sha256'][:12]}…): the two files come from "
            "different builds; run plancc build again"
        )


def worker_options(
    manifest: str | os.PathLike[str] | Mapping[str, Any] | Manifest, platform: str
) -> dict[str, bool]:
    """Load the manifest, check it is for ``platform``, and return the worker options."""
    m = manifest if isinstance(manifest, Manifest) else load_manifest(manifest)
    m.check_platform(platform)
    return m.worker_options()


def _parse(source: str, data: Any) -> Manifest:
    if not isinstance(data, Mapping):
        raise MalformedManifestError(f"{source}: a manifest is a JSON object")
    if data.get("format") != FORMAT:
        raise MalformedManifestError(
            f'{source}: format is {json.dumps(data.get("format"))}, expected "{FORMAT}" '
            "(rebuild it with this plancc)"
        )
    from jsonschema import exceptions  # noqa: PLC0415 (generated modules import this; keep it light)

    error = exceptions.best_match(_validator().iter_errors(data))
    if error is not None:
        where = "/" + "/".join(str(p) for p in error.absolute_path)
        raise MalformedManifestError(f"{source}: at {where}: {error.message}")
    warms = tuple(
        Warm(
            name=w["name"],
            layer=w["layer"],
            name_hint=w["name_hint"],
            after=_listed(w["after"])[0],
            task=_listed(w["task"])[0],
            bytes=w["bytes"],
            tensors=tuple(t["name"] for t in w["tensors"]),
            anchors=_listed(w["after"]),
            tasks=_listed(w["task"]),
            next_layer=w["next_layer"],
            guards=tuple((g["param"], g["op"], g["bound"], g["source"]) for g in w["guards"]),
        )
        for w in data["warms"]
    )
    enable = data["runtime"]["enable_sdma"]
    if enable != bool(warms):
        raise MalformedManifestError(
            f"{source}: runtime.enable_sdma is {json.dumps(enable)} with {len(warms)} "
            f"warm{'' if len(warms) == 1 else 's'}; "
            "it is true exactly when there is a warm"
        )
    from plancc.tables.platforms import PLATFORMS  # noqa: PLC0415 (generated modules import this; keep it light)

    if enable and not PLATFORMS[data["platform"]].sdma:
        raise MalformedManifestError(
            f"{source}: platform '{data['platform']}' has no SDMA provider, "
            "so it cannot run warms (PC031)"
        )
    return Manifest(source, data["model"], data["platform"], enable, warms, data)


def _listed(value: str | list[str]) -> tuple[str, ...]:
    """One anchor's value, or a join's list of them, as a tuple."""
    return (value,) if isinstance(value, str) else tuple(value)


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator  # noqa: PLC0415 (generated modules import this; keep it light)

    from plancc.tables.resources import read_text  # noqa: PLC0415 (generated modules import this; keep it light)

    return Draft202012Validator(json.loads(read_text("schemas", "manifest.schema.json")))
