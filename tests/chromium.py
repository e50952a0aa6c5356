"""Drive headless Chromium over the DevTools protocol, for the report's browser test.

Why the protocol over a pipe (``--remote-debugging-pipe``): it needs no extra
package (no websocket client, no playwright and its browser download), and
it is the only way to get at what the test must check besides a screenshot:
console messages and uncaught errors, and where each label lands in layout.
``--screenshot`` and ``--dump-dom`` show neither. Chromium reads commands on
fd 3 and writes replies and events on fd 4, each a JSON text ending in NUL.

Also a script: ``python tests/chromium.py PAGE.html OUT.png [HEIGHT]`` writes a
screenshot of a page at 1280 px, its top HEIGHT px if given (docs/report.md's
image: ``make screenshot``).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

WIDTH = 1280

FLAGS = [
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
]


def find() -> str | None:
    """The Chromium binary: $CHROMIUM, else chromium or chromium-browser on PATH."""
    given = os.environ.get("CHROMIUM")
    if given:
        return given
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One headless Chromium with one page, attached by a flat session."""

    def __init__(self, binary: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self._next = 0
        self._buffer = b""
        self._profile = tempfile.TemporaryDirectory(prefix="plancc-chromium-")
        to_child, self._write = os.pipe()
        self._read, from_child = os.pipe()
        # Above the fds 3 and 4 the child needs, so that placing one cannot overwrite the other.
        high_in = fcntl.fcntl(to_child, fcntl.F_DUPFD, 10)
        high_out = fcntl.fcntl(from_child, fcntl.F_DUPFD, 10)

        def child_fds() -> None:
            os.dup2(high_in, 3)
            os.dup2(high_out, 4)

        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            pass_fds=(3, 4, high_in, high_out),
            preexec_fn=child_fds,  # noqa: PLW1509 (single-threaded test process)
        )
        for fd in (to_child, from_child, high_in, high_out):
            os.close(fd)
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.call("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._write)
        os.close(self._read)
        self._log.close()
        self._profile.cleanup()

    def stderr(self) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = False
    ) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode("utf-8") + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self.events.append(reply)

    def wait_for(self, event: str) -> dict[str, Any]:
        for seen in self.events:
            if seen.get("method") == event:
                return seen
        while True:
            message = self._receive()
            self.events.append(message)
            if message.get("method") == event:
                return message

    def _receive(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._read], [], [], max(left, 0))
            if not ready:
                raise TimeoutError(f"Chromium did not answer in {self.timeout:g} s")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium exited: {self.stderr()[-2000:]}")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(text)
        return message

    # -- what the test asks -------------------------------------------------------------

    def open(self, page: Path, height: int = 900) -> None:
        self.resize(height)
        self.call("Page.navigate", {"url": page.resolve().as_uri()}, session=True)
        self.wait_for("Page.loadEventFired")

    def resize(self, height: int) -> None:
        metrics = {"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": False}
        self.call("Emulation.setDeviceMetricsOverride", metrics, session=True)

    def evaluate(self, expression: str) -> Any:
        reply = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True
        )
        if "exceptionDetails" in reply:
            raise RuntimeError(f"evaluation failed: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, most: int | None = None) -> bytes:
        """The whole page (or its top ``most`` px), 1280 px wide."""
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.resize(min(height, most or height))
        shot = self.call("Page.captureScreenshot", {"format": "png"}, session=True)
        return base64.b64decode(shot["data"])

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions, failed loads, log errors."""
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning"):
                out.append(f"console {params['type']}: {params.get('args')}")
            elif method == "Runtime.exceptionThrown":
                out.append(f"exception: {params.get('exceptionDetails')}")
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                out.append(f"log {params['entry']['level']}: {params['entry'].get('text')}")
        return out


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: python tests/chromium.py PAGE.html OUT.png [HEIGHT]", file=sys.stderr)
        return 2
    binary = find()
    if binary is None:
        print("no Chromium found (set CHROMIUM)", file=sys.stderr)
        return 2
    with Browser(binary) as browser:
        browser.open(Path(argv[0]))
        Path(argv[1]).write_bytes(browser.screenshot(int(argv[2]) if len(argv) == 3 else None))
        problems = browser.problems()
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
