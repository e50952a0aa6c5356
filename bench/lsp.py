"""Benchmark for `make bench`: how long an editor waits for diagnostics after a change.

Starts the real `plancc lsp` process, opens the Flash plan, then sends one
whole-text `didChange` at a time (an edit to a comment, so the diagnostics
stay those of the plan) and measures the time until the server publishes the
diagnostics of that version: the debounce, the check in the worker thread and
the JSON-RPC round trip. The target is 100 ms on the development machine; the
in-process front end alone is measured beside it, so the server's own share
shows as the difference. Wall times depend on what else runs (several jobs
share two cores here), so the server's CPU time per change is printed too: the
latency an idle machine would see. Nothing here asserts a time.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types as T
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "plans" / "deepseek_v4_flash.yaml"
CHANGES = 30
TARGET_MS = 100.0


async def server_latencies(text: str) -> tuple[list[float], float | None]:
    """Each change's wait for its diagnostics (ms), and the server's CPU time per change."""
    client = LanguageClient("plancc-bench", "1")
    published: dict[int, float] = {}
    arrived = asyncio.Event()

    @client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: T.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            published[params.version] = time.perf_counter()
            arrived.set()

    async def until_published(version: int) -> None:
        while version not in published:
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), timeout=60)

    await client.start_io(sys.executable, "-m", "plancc", "lsp")
    await client.initialize_async(T.InitializeParams(capabilities=T.ClientCapabilities()))
    client.initialized(T.InitializedParams())
    uri = PLAN.as_uri()
    item = T.TextDocumentItem(uri=uri, language_id="yaml", version=0, text=text)
    client.text_document_did_open(T.DidOpenTextDocumentParams(text_document=item))
    await until_published(0)
    pid = client._server.pid if client._server is not None else None
    cpu_before = _cpu_seconds(pid)
    out = []
    for version in range(1, CHANGES + 1):
        changed = text.replace("# DeepSeek V4 Flash", f"# DeepSeek V4 Flash ({version})", 1)
        sent = time.perf_counter()
        client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(version=version, uri=uri),
                content_changes=[T.TextDocumentContentChangeWholeDocument(text=changed)],
            )
        )
        await until_published(version)
        out.append((published[version] - sent) * 1000)
    cpu_after = _cpu_seconds(pid)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    if cpu_before is None or cpu_after is None:
        return out, None
    return out, (cpu_after - cpu_before) * 1000 / CHANGES


def _cpu_seconds(pid: int | None) -> float | None:
    """A process's user + system CPU time, from /proc (None where there is no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def in_process_ms(text: str) -> tuple[list[float], list[float]]:
    """The front end alone, in this process: wall times and CPU times (the CPU time is
    what the wall time would be on an idle machine: several jobs share two cores here)."""
    from plancc.api import diagnose_plan
    from plancc.inputs import PlanInput

    wall, cpu = [], []
    for _ in range(CHANGES):
        start, start_cpu = time.perf_counter(), time.process_time()
        diagnose_plan(PlanInput(str(PLAN), PLAN), text.encode("utf-8"))
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return wall, cpu


def main() -> None:
    text = PLAN.read_text("utf-8")
    served, server_cpu = asyncio.run(server_latencies(text))
    alone, cpu = in_process_ms(text)
    median = statistics.median(served)
    print(f"lsp: didChange -> publishDiagnostics on {PLAN.name}, {CHANGES} changes")
    print(
        f"  server       median {median:6.1f} ms   min {min(served):6.1f}   max {max(served):6.1f}"
    )
    if server_cpu is not None:
        print(f"  server CPU   mean   {server_cpu:6.1f} ms per change (the idle figure)")
    print(f"  check alone  median {statistics.median(alone):6.1f} ms (in-process front end)")
    print(f"  check CPU    median {statistics.median(cpu):6.1f} ms (its CPU time: the idle figure)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  load average {load:.2f} on {os.cpu_count()} cores")
    for what, ms in (("wall median", median), ("server CPU", server_cpu)):
        if ms is not None:
            verdict = "within" if ms <= TARGET_MS else "OVER"
            print(f"  {what}: {verdict} the {TARGET_MS:.0f} ms target ({ms / TARGET_MS:.2f}×)")


if __name__ == "__main__":
    main()
