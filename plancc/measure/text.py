"""The report a person reads in a terminal, printed from the JSON-shaped result."""

from __future__ import annotations

from typing import Any

from plancc.measure.units import MINUS, bandwidth, signed_pct, signed_us

_COLUMNS = ("rounds", "min", "p50", "mean", "p90", "max")


def render(r: dict[str, Any]) -> str:
    m = r["manifest"]
    out = [f"plancc measure: {m['model']} on {m['platform']} (manifest {m['file']})", ""]
    if r["verdict"] is None:
        out.append("no benchmark logs: no verdict (give --baseline and --warm for one)")
    else:
        out += wall_table(r)
        out.append("")
        out += deltas(r)
        out += verdict_lines(r)
        out += warmup_lines(r["warmup"])
    if r["traces"]:
        out += ["", *scope_lines(r)]
    if r["stage_windows"]:
        out += ["", "stage windows (finish-to-finish between two task-timing slots, µs)"]
        out += ["  " + window_line(w) for w in r["stage_windows"]]
    return "\n".join(out) + "\n"


def num(x: float | int | None) -> str:
    if x is None:
        return "-"
    return str(x) if isinstance(x, int) else f"{x:.1f}"


def wall_table(r: dict[str, Any]) -> list[str]:
    out = ["wall time, µs".ljust(24) + "".join(f"{c:>10}" for c in _COLUMNS)]
    for key in ("baseline", "warm"):
        v = r[key]
        warmup = "warmup unknown" if v["warmup"] is None else f"warmup {v['warmup']}"
        flat = (
            ", fallback_flattened=1: per-rank figures unreliable" if v["fallback_flattened"] else ""
        )
        out.append(f"{key}: {v['file']} ({warmup}{flat})")
        rows = [("  headline", v["headline"])]
        for rank in v["ranks"]:
            mark = " *" if rank["rank"] == v["fastest_rank"] else ""
            rows.append((f"  rank {rank['rank']}{mark}", rank["figures"]))
        out += [
            label.ljust(24) + "".join(f"{num(f[c]):>10}" for c in _COLUMNS) for label, f in rows
        ]
        if v["missing"]:
            out.append("  missing: " + "; ".join(v["missing"]))
    out.append("* fastest rank (smallest median): the figure quoted")
    return out


def delta_text(d: dict[str, Any]) -> str:
    parts = []
    for k in ("p50", "mean", "p90"):
        x = d[k]
        parts.append(
            f"{k} -" if x is None else f"{k} {signed_us(x['us'])} µs ({signed_pct(x['pct'])})"
        )
    return ", ".join(parts)


def deltas(r: dict[str, Any]) -> list[str]:
    base, warm = r["baseline"], r["warm"]
    who = "fastest rank"
    if base["fastest_rank"] and warm["fastest_rank"]:
        who = f"fastest rank ({base['fastest_rank']} -> {warm['fastest_rank']})"
    return [
        f"Δ {who}: {delta_text(r['delta']['fastest_rank'])}",
        f"Δ headline: {delta_text(r['delta']['headline'])}",
    ]


def verdict_lines(r: dict[str, Any]) -> list[str]:
    v = r["verdict"]
    out = [f"verdict: {v['decision']}: {v['reason']}"]
    out += [f"  mismatch: {x['text']}" for x in v["mismatches"]]
    if v["heavy_tail"]:
        prefix = "warning" if v["decision"] == "ship" else "also"
        out.append(f"  {prefix}: heavy tail: {v['heavy_tail']}")
    return out


def warmup_lines(w: dict[str, Any]) -> list[str]:
    rounds = w["rounds"]["warm"]
    if w["warm_issues"] is not None:
        line = (
            f"warmup: {rounds} rounds × {w['warm_issues_per_round']} warm issues = "
            f"{w['warm_issues']:,} warm issues (seed: at least {w['recommended']:,})"
        )
    else:
        line = f"warmup: unknown × {w['warm_issues_per_round']} warm issues"
    out = [line]
    if w["warning"]:
        out.append(f"  warning: {w['warning']}")
    spikes = w["spikes"]
    if spikes["baseline"] or spikes["warm"]:
        parts = [
            f"{k} -"
            if s is None
            else f"{k} {s['spikes']} of {s['rounds']} rounds ({s['rate_pct']:.1f} %)"
            for k, s in spikes.items()
        ]
        out.append(
            f"  spikes (a round more than {w['spike_us']:.0f} µs above its rank's median): "
            + ", ".join(parts)
        )
    return out


def scope_lines(r: dict[str, Any]) -> list[str]:
    n = len(r["traces"])
    out = [f"warm scopes ({n} trace{'' if n == 1 else 's'})"]
    for s in r["scopes"]:
        head = f"  {s['warm']} ({s['layer']}, name_hint {s['name_hint']}), {s['bytes']:,} B: "
        upto = "up to " if s["guards"] else ""  # a guarded warm: a run may skip it
        expected = "" if s["expected"] is None else f" of {upto}{s['expected']}"
        if s["kernel_us"] is None:
            head += f"0{expected} scopes"
        else:
            k = s["kernel_us"]
            head += (
                f"{s['instances']}{expected} scopes, kernel p50 {k['p50']:.1f} µs, "
                f"mean {k['mean']:.1f} µs -> {bandwidth(s['gbps'] * 1000)}"
            )
        out.append(head)
        if s["landed"] and not any(f["flag"] == "late" for f in s["flags"]):
            ld = s["landed"]
            out.append(
                f"    landed before its consumer {ld['consumer']} "
                f"in {ld['before']} of {ld['of']} layers"
            )
        out += [f"    flag: {f['message']}" for f in s["flags"]]
        out += [f"    note: {note}" for note in s["notes"]]
    out += [f"  flag: {x['message']}" for x in r["splits"]]
    for u in r["unattributed"]:
        k = u["kernel_us"]
        figure = "" if k is None else f", kernel p50 {k['p50']:.1f} µs"
        if u["gbps"] is not None:
            figure += f" -> {bandwidth(u['gbps'] * 1000)}"
        out.append(
            f"  unattributed: {u['scopes']} {u['name_hint']} scope{'' if u['scopes'] == 1 else 's'}"
            f" in {u['file']}{figure}, credited to none of {', '.join(u['warms'])}: {u['reason']}"
        )
        out += [f"    flag: {f['message']}" for f in u["flags"]]
    return out


def _span(x: dict[str, Any] | None) -> str:
    if x is None:
        return "-"
    lo, hi = f"{x['min']:.0f}", f"{x['max']:.0f}"
    return (lo if lo == hi else f"{lo}–{hi}").replace("-", MINUS) + " µs"


def window_line(w: dict[str, Any]) -> str:
    a, b = w["slots"]
    text = (
        f"{w['window']} (slots {a}→{b}): "
        f"with the warm {_span(w['warm'])}, without {_span(w['baseline'])}"
    )
    if w["standalone_us"] is not None:
        text += f", standalone {w['standalone_us']:.1f} µs"
    if w["note"]:
        text += f" (note: {w['note']})"
    return text
