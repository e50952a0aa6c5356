"""What a measurement needs from the build's manifest: each warm's bytes, name_hint and
consumer kernels, the forward's layer kinds, the platform's single-stream SDMA rate."""

from __future__ import annotations

from dataclasses import dataclass

from plancc.measure.errors import InputError
from plancc.runtime import ManifestError, load_manifest
from plancc.tables.platforms import PLATFORMS


@dataclass(frozen=True)
class Warm:
    name: str
    layer: str
    name_hint: str
    bytes: int
    tensors: int  # warm issues per instance: one async_prefetch per tensor
    consumer_kernels: tuple[str | None, ...]  # the consumer stages' kernels, stage order
    first_consumer: str | None  # the first consumer stage's name
    after: tuple[str, ...] = ()  # its anchor stages: one, or a join's
    tensor_names: tuple[str, ...] = ()  # its tensors, in issue order
    # The layer kind of each consumer stage (``consumer_kernels``'s order): a cross-layer
    # warm's are the next layer's.
    consumer_layers: tuple[str, ...] = ()
    next_layer: bool = False  # issued in one layer for the next: none in the forward's last
    guards: tuple[tuple[str, str, int], ...] = ()  # its run-time guards: (param, op, bound)
    rows: tuple[tuple[int, int] | None, ...] = ()  # per tensor, a prefix's [lo, hi)

    @property
    def guarded(self) -> bool:
        """Whether a run may skip it: its guards decide at run time."""
        return bool(self.guards)

    @property
    def guard_texts(self) -> list[str]:
        """Its guards as the plan writes them: ``CTX <= 2272``."""
        return [f"{p} {op} {b}" for p, op, b in self.guards]


@dataclass(frozen=True)
class Manifest:
    file: str
    model: str
    platform: str
    plan: str  # the plan file it was built from, relative to the manifest
    plan_sha256: str  # of the plan's bytes: which build a measurement is of
    single_stream_bytes_per_s: int | None  # None: the platform table has no rate
    warms: tuple[Warm, ...]
    kinds: tuple[str, ...] | None  # the forward's layer kinds, in order; None without forward
    warm_issues_per_round: int


def _rows(x: object) -> tuple[int, int] | None:
    return (x[0], x[1]) if isinstance(x, list) and len(x) == 2 else None


def load(path: str) -> Manifest:
    try:
        data = load_manifest(path).data
    except ManifestError as exc:  # unreadable, malformed, or away from its module
        # Its message already starts with the file name.
        raise InputError(path, str(exc).removeprefix(f"{path}: ")) from None
    warms = tuple(
        Warm(
            name=w["name"],
            layer=w["layer"],
            name_hint=w["name_hint"],
            bytes=w["bytes"],
            tensors=len(w["tensors"]),
            consumer_kernels=tuple(c["kernel"] for c in w["consumers"]),
            first_consumer=w["consumers"][0]["stage"] if w["consumers"] else None,
            after=(w["after"],) if isinstance(w["after"], str) else tuple(w["after"]),
            tensor_names=tuple(t["name"] for t in w["tensors"]),
            consumer_layers=tuple(c["layer"] for c in w["consumers"]),
            next_layer=w["next_layer"],
            guards=tuple((g["param"], g["op"], g["bound"]) for g in w["guards"]),
            rows=tuple(_rows(t.get("rows")) for t in w["tensors"]),
        )
        for w in data["warms"]
    )
    if not warms:
        raise InputError(path, "the plan has no warm: there is nothing to measure")
    forward = data.get("forward")
    if forward is not None:
        kinds: tuple[str, ...] | None = tuple(forward["kinds"])
        issues = forward["warm_issues"]
    else:
        kinds, issues = None, sum(w.tensors for w in warms)
    platform = data["platform"]
    return Manifest(
        file=path,
        model=data["model"],
        platform=platform,
        plan=data["source"]["plan"],
        plan_sha256=data["source"]["sha256"],
        single_stream_bytes_per_s=PLATFORMS[platform].sdma_bytes_per_s,
        warms=warms,
        kinds=kinds,
        warm_issues_per_round=issues,
    )
