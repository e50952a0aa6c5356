"""The report as markdown: tables to paste into a pull request."""

from __future__ import annotations

from typing import Any

from plancc.measure.text import _COLUMNS, delta_text, num, window_line
from plancc.measure.units import bandwidth


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(r: dict[str, Any]) -> str:
    m, v = r["manifest"], r["verdict"]
    out = [f"### plancc measure: `{m['model']}` on {m['platform']}", ""]
    if v is None:
        out.append("**No verdict**: no benchmark logs (a report of the traces alone)")
    else:
        out += _wall(r, v)
    if r["scopes"]:
        out += [
            "",
            "| warm | bytes | scopes | kernel p50 µs | mean µs | bandwidth | landed | flags |",
        ]
        out.append("|---|---:|---:|---:|---:|---:|---|---|")
        for s in r["scopes"]:
            k = s["kernel_us"]
            landed = f"{s['landed']['before']} of {s['landed']['of']}" if s["landed"] else "-"
            out.append(
                f"| {s['warm']} | {s['bytes']:,} | {s['instances']} | "
                f"{num(k and k['p50'])} | {num(k and k['mean'])} | "
                f"{bandwidth(s['gbps'] * 1000) if s['gbps'] else '-'} | {landed} | "
                + (", ".join(f["flag"] for f in s["flags"]) or "-")
                + " |"
            )
        flags = [f["message"] for s in r["scopes"] for f in s["flags"]]
        flags += [x["message"] for x in r["splits"]]
        flags += [
            f"unattributed: {u['scopes']} {u['name_hint']} scopes in {u['file']}: {u['reason']}"
            for u in r["unattributed"]
        ]
        out += ["", *(f"- {_cell(f)}" for f in flags)] if flags else []
    if r["stage_windows"]:
        out += ["", *(f"- {window_line(x)}" for x in r["stage_windows"])]
    return "\n".join(out) + "\n"


def _wall(r: dict[str, Any], v: dict[str, Any]) -> list[str]:
    out = [f"**Verdict: {v['decision']}** — {_cell(v['reason'])}"]
    if v["mismatches"]:
        out += ["", *(f"- mismatch: {_cell(x['text'])}" for x in v["mismatches"])]
    if v["heavy_tail"]:
        out.append(f"\n> heavy tail: {v['heavy_tail']}")
    out += [
        "",
        "| run | series | " + " | ".join(_COLUMNS) + " |",
        "|---|---|" + "---:|" * len(_COLUMNS),
    ]
    for key in ("baseline", "warm"):
        variant = r[key]
        rows = [("headline", variant["headline"])]
        rows += [
            (
                f"rank {x['rank']}"
                + (" (fastest)" if x["rank"] == variant["fastest_rank"] else ""),
                x["figures"],
            )
            for x in variant["ranks"]
        ]
        for label, f in rows:
            out.append(f"| {key} | {label} | " + " | ".join(num(f[c]) for c in _COLUMNS) + " |")
    out += [
        "",
        f"- Δ fastest rank: {delta_text(r['delta']['fastest_rank'])}",
        f"- Δ headline: {delta_text(r['delta']['headline'])}",
    ]
    w = r["warmup"]
    if w["warning"]:
        out.append(f"- warmup: {_cell(w['warning'])}")
    for key in ("baseline", "warm"):
        if r[key]["missing"]:
            out.append(f"- {key} missing: " + "; ".join(r[key]["missing"]))
    return out
