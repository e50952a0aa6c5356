"""Inputs of `plancc measure` in the exact forms PyPTO writes them.

- ``trace``: the swimlane converter's Chrome Trace Event JSON (``indent=2``, its key
  order, a Worker View and a Scheduler View of every task, dependency flows);
  tests/test_measure_inputs.py rebuilds ``tests/data/swimlane-example.json`` (a copy
  of the converter's own output) byte for byte with it.
- ``bench_log``: pypto-lib's runner lines under ``PYPTO_BENCH=1`` (and
  ``PYPTO_BENCH_RAW=1``), interleaved with other log lines.
- ``strace``: the runtime's ``[STRACE]`` task-slot lines.
- ``scenario``: the seed's measurements as such inputs (docs/measure.md).
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

AIC_TID0 = 10000  # tid = 10000 + 10 × core_id


@dataclass(frozen=True)
class Task:
    """One task as the converter sees it: µs stamps relative to the file's first one."""

    kernel: str  # the event name without "(t<n>)"
    task: int
    func: int
    cores: tuple[int, ...]  # an SPMD task runs on several
    receive: float  # the core receives the task (Worker View ts)
    start: float  # the kernel starts (receive + local set-up)
    end: float
    dispatch: float  # the AICPU dispatches it (Scheduler View ts)
    finish: float
    fanin: tuple[int, ...] = ()
    ring: int | None = None

    @property
    def label(self) -> str:
        ring = f"r{self.ring}" if self.ring is not None else ""
        return f"{self.kernel}({ring}t{self.task})"


def tick(us: float) -> float:
    """A stamp as the converter computes it: 50 MHz ticks (0.02 µs) times 0.02."""
    return round(us * 50) * 0.02


def lane(core: int) -> str:
    return f"AIC_{core}" if core < 24 else f"AIV_{core}"


def _meta(name: str, pid: int, args: dict[str, Any], tid: int | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"args": args, "cat": "__metadata", "name": name, "ph": "M", "pid": pid}
    if tid is not None:
        event["tid"] = tid
    return event


def trace_events(tasks: Sequence[Task]) -> dict[str, Any]:
    """The converter's document for these tasks."""
    fanout: dict[int, list[int]] = {t.task: [] for t in tasks}
    for t in tasks:
        for producer in t.fanin:
            fanout[producer].append(t.task)
    tasks = [
        Task(
            t.kernel,
            t.task,
            t.func,
            t.cores,
            tick(t.receive),
            tick(t.start),
            tick(t.end),
            tick(t.dispatch),
            tick(t.finish),
            t.fanin,
            t.ring,
        )
        for t in tasks
    ]
    cores = sorted({c for t in tasks for c in t.cores})
    events: list[dict[str, Any]] = [
        _meta("process_name", 4, {"name": "Worker View"}),
        _meta("process_sort_index", 4, {"sort_index": 4}),
        _meta("process_name", 3, {"name": "Scheduler View"}),
        _meta("process_sort_index", 3, {"sort_index": 3}),
    ]
    ids: dict[tuple[int, int], int] = {}  # (pid, task) -> id of its first event
    next_id = 0
    for pid in (4, 3):
        events += [_meta("thread_name", pid, {"name": lane(c)}, AIC_TID0 + 10 * c) for c in cores]
        for t in tasks:
            for core in t.cores:
                hint = f"Task:t{t.task}, FuncId:{t.func}, CoreId:{core}"
                if pid == 4:
                    outs = fanout[t.task]
                    args: dict[str, Any] = {
                        "event-hint": hint,
                        "fanout-hint": f"{len(outs)}: [{', '.join(f't{o}' for o in outs)}]",
                        "fanin-hint": f"{len(t.fanin)}: [{', '.join(f't{i}' for i in t.fanin)}]",
                        "duration-us": t.end - t.receive,
                        "kernel-duration-us": t.end - t.start,
                        "local_setup_us": t.start - t.receive,
                        "taskId": t.task,
                    }
                    ts, dur = t.receive, t.end - t.receive
                else:
                    args = {
                        "event-hint": hint,
                        "dispatch-time-us": t.dispatch,
                        "finish-time-us": t.finish,
                        "aicpu-duration-us": t.finish - t.dispatch,
                        "taskId": t.task,
                    }
                    ts, dur = t.dispatch, t.finish - t.dispatch
                ids.setdefault((pid, t.task), next_id)
                events.append(
                    {
                        "args": args,
                        "cat": "event",
                        "id": next_id,
                        "name": t.label,
                        "ph": "X",
                        "pid": pid,
                        "tid": AIC_TID0 + 10 * core,
                        "ts": ts,
                        "dur": dur,
                    }
                )
                next_id += 1
    by_task = {t.task: t for t in tasks}
    flow = 0
    for pid in (4, 3):
        for t in tasks:
            for producer in t.fanin:
                p = by_task[producer]
                counts = {
                    "input_task_count": len(t.fanin),
                    "output_task_count": len(fanout[producer]),
                }
                stamp = (lambda x: x.receive) if pid == 4 else (lambda x: x.dispatch)
                events.append(
                    {
                        "cat": "flow",
                        "id": flow,
                        "name": "dependency",
                        "ph": "s",
                        "pid": pid,
                        "tid": AIC_TID0 + 10 * p.cores[0],
                        "ts": stamp(p),
                        **counts,
                        "bind_id": ids[(pid, producer)],
                    }
                )
                events.append(
                    {
                        "cat": "flow",
                        "id": flow,
                        "name": "dependency",
                        "ph": "f",
                        "pid": pid,
                        "tid": AIC_TID0 + 10 * t.cores[0],
                        "ts": stamp(t),
                        "bp": "e",
                        **counts,
                        "bind_id": ids[(pid, t.task)],
                    }
                )
                flow += 1
    return {"traceEvents": events}


def write_trace(path: Path, tasks: Sequence[Task]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(trace_events(tasks), indent=2), encoding="utf-8")
    return path


def example_tasks() -> list[Task]:
    """The tasks of ../shared/data/swimlane-example.json (an SPMD q projection, the
    warm, and proj_a_mm)."""
    return [
        Task("qproj_dequant_rms_nope_rope_spmd", 16, 16, (24, 25), 0.5, 1.0, 8.0, 0.0, 8.4),
        Task("prefetch_o_proj_w", 17, 20, (26,), 8.5, 9.0, 38.26, 8.8, 38.66, (16,)),
        Task("proj_a_mm", 18, 47, (0,), 10.5, 11.0, 21.0, 10.0, 21.4, (16,)),
    ]


# -- benchmark logs ---------------------------------------------------------------------


def _f(x: float) -> str:
    return f"{x:.1f}"


def _figs(xs: Sequence[float]) -> str:
    return (
        f"min={_f(min(xs))} median={_f(statistics.median(xs))} "
        f"mean={_f(statistics.fmean(xs))} max={_f(max(xs))}"
    )


def bench_log(
    ranks: dict[int, Sequence[float]],
    *,
    warmup: int = 500,
    raw: bool = True,
    flattened: bool = False,
    kernel: str = "decode_fwd",
) -> str:
    """The runner's stdout for one PYPTO_BENCH run: every rank's samples (µs, one per round)."""
    samples = [[round(x, 1) for x in xs] for xs in ranks.values()]
    rounds = len(samples[0])
    per_round = [max(r) for r in zip(*samples, strict=True)]
    flat = " fallback_flattened=1" if flattened else ""
    lines = [
        "[INFO] loading golden inputs for decode_fwd",
        f"[RUN]   effective_us ({rounds} rounds) {_figs(per_round)}",
    ]
    if raw:
        lines.append(
            f"[RUN]   raw samples: ranks={len(ranks)} rounds={rounds} warmup={warmup}{flat}"
        )
        for pid, xs in zip(ranks, samples, strict=True):
            lines.append(f"[RUN]     rank {pid} raw n={len(xs)} eff_us=[{', '.join(map(_f, xs))}]")
    lines.append(
        f"[RUN] benchmark kernel={kernel} l3_resident=1 rounds={rounds} ranks={len(ranks)} "
        f"host_union_mean_us={round(statistics.fmean(per_round) + 780)} "
        f"host_mean_us={round(statistics.fmean(per_round) + 1460)}{flat}"
    )
    for pid, xs in zip(ranks, samples, strict=True):
        lines.append(f"[RUN]     rank {pid}: eff_us {_figs(xs)}")
    lines.append("[INFO] golden check passed")
    return "\n".join(lines) + "\n"


def spread(median: float, n: int = 100, step: float = 0.4) -> list[float]:
    """n samples (n even) evenly around ``median``: their median is exactly it."""
    return [round(median + (i - (n - 1) / 2) * step, 1) for i in range(n)]


# -- task-timing slots --------------------------------------------------------------------


def strace(pid: int, inv: int, slot: int, ts_ns: int, dur_ns: int, *, old: bool = False) -> str:
    prefix = "simpler_run" if old else "chip.run"
    return (
        f"[STRACE] v=1 pid={pid} tid={pid} inv={inv} hid=7f3a depth=3 "
        f"name={prefix}.runner_run.device_wall.task_slot_{slot} ts={ts_ns} dur={dur_ns} clk=dev"
    )


def slot_lines(pid: int, windows_us: Sequence[float], a: int = 3, b: int = 4) -> str:
    """One invocation per window: slot a ends, slot b ends ``window`` µs later."""
    out = []
    for inv, w in enumerate(windows_us, 1):
        base = 1_000_000 * inv
        out.append(strace(pid, inv, a, base, 200_000))
        out.append(strace(pid, inv, b, base + 150_000, 50_000 + round(w * 1000)))
    return "\n".join(out) + "\n"


# -- manifests ----------------------------------------------------------------------------


@dataclass
class ManifestWarm:
    name: str
    layer: str
    tensors: dict[str, int]  # name -> bytes (int8, flat)
    name_hint: str | None = None
    consumers: list[tuple[str, str | None]] = field(default_factory=list)
    next_layer: bool = False  # its consumers are the next layer's (of its own kind here)
    guards: list[tuple[str, str, int]] = field(default_factory=list)  # (param, op, bound)


def manifest(warms: Sequence[ManifestWarm], kinds: Sequence[str] | None = None) -> dict[str, Any]:
    """A manifest that matches schemas/manifest.schema.json, for warms of given bytes."""
    total = sum(sum(w.tensors.values()) for w in warms)
    doc: dict[str, Any] = {
        "format": "plancc-manifest/1",
        "model": "seed",
        "platform": "a2a3",
        "source": {"plan": "seed.yaml", "sha256": "0" * 64},
        "module": {"file": "seed_warms.py", "sha256": hashlib.sha256(MODULE).hexdigest()},
        "runtime": {"enable_sdma": bool(warms)},
        "l2": {
            "capacity_bytes": 201326592,
            "peak_bytes": total,
            "peak_fraction": total / 201326592,
            "budget_fraction": 0.75,
        },
        "warms": [
            {
                "name": w.name,
                "layer": w.layer,
                "name_hint": w.name_hint or w.name,
                "after": "q_proj",
                "task": "q_rope_tid",
                "bytes": sum(w.tensors.values()),
                "next_layer": w.next_layer,
                "consumed_in": [w.layer],
                "guards": [
                    {"param": p, "op": op, "bound": b, "source": p.lower()} for p, op, b in w.guards
                ],
                "consumers": [{"stage": s, "layer": w.layer, "kernel": k} for s, k in w.consumers],
                "tensors": [
                    {"name": t, "dtype": "int8", "shape": [n], "flat": [n], "bytes": n}
                    for t, n in w.tensors.items()
                ],
                "parameters": [
                    *(
                        {
                            "name": t,
                            "kind": "tensor",
                            "dtype": "int8",
                            "shape": [n],
                            "layer": "this",
                        }
                        for t, n in w.tensors.items()
                    ),
                    *(
                        {"name": p.lower(), "kind": "guard", "type": "int32", "param": p}
                        for p, _, _ in w.guards
                    ),
                    {"name": "after", "kind": "task", "stage": "q_proj", "task": "q_rope_tid"},
                ],
            }
            for w in warms
        ],
    }
    if kinds is not None:
        per_kind = {w.layer: 0 for w in warms}
        for w in warms:
            per_kind[w.layer] += len(w.tensors)
        spared = sum(len(w.tensors) for w in warms if w.next_layer and w.layer == kinds[-1])
        doc["forward"] = {
            "layers": len(kinds),
            "warm_issues": sum(per_kind.get(k, 0) for k in kinds) - spared,
            "warm_bytes": sum(
                sum(w.tensors.values()) for k in kinds for w in warms if w.layer == k
            ),
            "kinds": list(kinds),
        }
        guarded = sum(len(w.tensors) for k in kinds for w in warms if w.layer == k and w.guards)
        if guarded:
            doc["forward"]["guarded_warm_issues"] = guarded
        for w, entry in zip(warms, doc["warms"], strict=True):
            entry["issues"] = sum(k == w.layer for k in kinds) - (
                w.next_layer and kinds[-1] == w.layer
            )
    return doc


MODULE = b"# the generated module a manifest names (module.sha256)\n"


def write_json(path: Path, doc: dict[str, Any]) -> Path:
    """Writes ``doc``; beside a manifest, the module it names (plancc.runtime checks it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    module = doc.get("module") if isinstance(doc, dict) else None
    if isinstance(module, dict) and module.get("file") == "seed_warms.py":
        (path.parent / "seed_warms.py").write_bytes(MODULE)
    return path


# -- the seed's Flash forward ---------------------------------------------------------------

LAYER_US = 790.0  # ~34 ms over 43 layers


def forward_tasks(
    kinds: Sequence[str],
    *,
    warm_us: float = 353.2,
    hint: str = "prefetch_o_proj_w",
    late: Sequence[int] = (),
    missing: Sequence[int] = (),
    fillers: int = 0,
    anchor: bool = True,
    suffix: bool = True,
) -> list[Task]:
    """One decode forward's swimlane: per layer, the SPMD q projection (the anchor), the
    warm on AIV_26, then proj_a_mm and proj_b_mm; kernels repeated across the forward's
    call sites carry _<layer> suffixes (without ``suffix``, the warm's name carries none,
    as when each layer is its own function). A ``late`` layer's warm ends after proj_a_mm
    starts; a ``missing`` layer has no warm. ``fillers`` other tasks per layer pad it;
    without ``anchor``, no q projection (and no dependency flows)."""
    tasks: list[Task] = []
    n = 0

    def add(
        kernel: str, cores: tuple[int, ...], start: float, us: float, fanin: tuple[int, ...] = ()
    ) -> int:
        nonlocal n
        n += 1
        tasks.append(
            Task(
                kernel,
                n,
                10 + len(tasks) % 50,
                cores,
                start - 0.5,
                start,
                start + us,
                start - 0.9,
                start + us + 0.4,
                fanin,
            )
        )
        return n

    for layer in range(len(kinds)):
        t0 = layer * LAYER_US
        after: tuple[int, ...] = ()
        if anchor:
            after = (add(f"qproj_dequant_rms_nope_rope_{layer}_spmd", (24, 25), t0 + 90.0, 9.0),)
        proj_a_at = t0 + 520.0
        if layer not in missing:
            us = proj_a_at - (t0 + 101.0) + 12.0 if layer in late else warm_us
            add(f"{hint}_{layer}" if suffix else hint, (26,), t0 + 101.0, us, after)
        a = add(f"proj_a_mm_{layer}", (0,), proj_a_at, 30.0, after)
        add(f"proj_b_mm_{layer}", (1,), t0 + 560.0, 20.0, (a,))
        for i in range(fillers):
            add(f"moe_expert_ffn_{layer}_spmd", (2 + i % 20,), t0 + 600.0 + (i % 9) * 20.0, 15.0)
    return tasks


def next_layer_tasks(
    layers: int,
    *,
    hint: str = "prefetch_next_qkv",
    warm_us: float = 44.0,
    late: Sequence[int] = (),
    skipped: Sequence[int] = (),
) -> list[Task]:
    """A forward of one layer kind with a cross-layer warm: per layer, its consumer
    qr_proj_mm at 50 µs, the MoE's combine (the anchor) at 700 µs, then the warm of the
    next layer's weights, in every layer but the last (named ``<hint>_<N>``, N its call
    site's: the layer), landing before the next layer's qr_proj_mm; a ``late`` layer's warm
    ends after it; a ``skipped`` layer issues none (a guard skipped it at run time)."""
    tasks: list[Task] = []
    n = 0

    def add(
        kernel: str, cores: tuple[int, ...], start: float, us: float, fanin: tuple[int, ...] = ()
    ) -> int:
        nonlocal n
        n += 1
        tasks.append(
            Task(
                kernel,
                n,
                10 + n % 50,
                cores,
                start - 0.5,
                start,
                start + us,
                start - 0.9,
                start + us + 0.4,
                fanin,
            )
        )
        return n

    for layer in range(layers):
        t0 = layer * LAYER_US
        add(f"qr_proj_mm_{layer}", (0,), t0 + 50.0, 20.0)
        anchor = add(f"moe_combine_{layer}_spmd", (24, 25), t0 + 700.0, 9.0)
        if layer < layers - 1 and layer not in skipped:
            us = LAYER_US + 50.0 - 710.0 + 12.0 if layer in late else warm_us
            add(f"{hint}_{layer}", (26,), t0 + 710.0, us, (anchor,))
    return tasks
