"""`plancc lsp` against hostile and large input: the wire over a real pipe (oversized
and malformed messages, params that do not fit, `exit`'s status), the work of a
request against the size of the plan, and a request never holding the event loop."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as T
from pygls.workspace.position_codec import PositionCodec

from plancc.load import Ends, Positions
from plancc.lsp import actions, completion, hover, navigation, outline, transport
from plancc.lsp import server as server_module
from plancc.lsp.diagnostics import to_lsp
from plancc.lsp.server import analyse, create
from plancc.lsp.state import PlanState
from plancc.source import modules
from tests.bench_plans import spread
from tests.test_source_cache import costly_layer

DEMO = (Path(__file__).parent / "data" / "lsp" / "demo.yaml").resolve()
FLASH = (Path(__file__).parents[1] / "plans" / "deepseek_v4_flash.yaml").resolve()
HANG = 60  # seconds: a guard against a hung server, never a measurement


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


def request(msg_id: int, method: str, params: Any = None) -> bytes:
    return frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})


def notify(method: str, params: Any = None) -> bytes:
    return frame({"jsonrpc": "2.0", "method": method, "params": params})


INIT = request(1, "initialize", {"capabilities": {}}) + notify("initialized", {})
BYE = request(99, "shutdown") + notify("exit")


class Server:
    """`plancc lsp` in its own process, spoken to over its pipes as an editor does."""

    def __init__(self, command: tuple[str, ...] = ("-m", "plancc", "lsp")) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.buffer = b""

    def stop(self) -> None:
        """The process killed (if it still runs) and its pipes closed."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        """The next message from the server (AssertionError if none comes)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + HANG
        while True:
            head, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if sep:
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                if len(rest) >= length:
                    self.buffer = rest[length:]
                    message: dict[str, Any] = json.loads(rest[:length])
                    return message
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(fd, 65536) if ready else b""
            assert chunk, f"no message from the server; it said: {self.stderr()}"
            self.buffer += chunk

    def answer(self, msg_id: int | None) -> dict[str, Any]:
        """The response to ``msg_id``, skipping the notifications before it."""
        while "id" not in (message := self.receive()) or message["id"] != msg_id:
            pass
        return message

    def end(self) -> int:
        """Close its input; its exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(HANG)

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    s.send(INIT)
    assert s.answer(1)["result"]["capabilities"]["hoverProvider"] is True
    yield s
    s.stop()


# -- the wire -------------------------------------------------------------------------------


def test_a_message_announced_at_a_terabyte_is_refused(server: Server) -> None:
    """Refused at its header, without reading it into memory (MemoryError killed the
    server); its body is skipped piece by piece, and the server stays up."""
    server.send(b"Content-Length: 1000000000000\r\n\r\n")
    why = (
        "plancc: refused a message of 1,000,000,000,000 bytes (the limit is 33,554,432); "
        "it is skipped"
    )
    assert server.answer(None) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": why},
    }
    assert server.receive()["params"] == {"type": 1, "message": why}  # window/showMessage
    server.send(b"x" * 3_000_000)  # a part of the body: read and dropped
    server.send(request(2, "shutdown"))  # still the body: no answer
    assert server.proc.poll() is None
    assert server.end() == 1  # the input ended before `shutdown` and `exit`
    assert "Traceback" not in server.stderr()


def test_after_an_oversized_message_the_next_one_is_read(server: Server) -> None:
    size = transport.MAX_MESSAGE + 1
    server.send(b"Content-Length: %d\r\n\r\n" % size)
    assert server.answer(None)["error"]["code"] == -32600
    server.send(b" " * size + request(2, "textDocument/documentSymbol", _doc("never.yaml")))
    assert server.answer(2) == {"jsonrpc": "2.0", "id": 2, "result": []}
    server.send(BYE)
    assert server.answer(99)["result"] is None
    assert server.proc.wait(HANG) == 0


def test_a_request_whose_params_do_not_fit_is_answered(server: Server) -> None:
    """-32602 with what does not fit, in the protocol's names (it got no answer at all)."""
    server.send(request(2, "textDocument/hover", {"textDocument": {"uri": "file:///a.yaml"}}))
    assert server.answer(2) == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {
            "code": -32602,
            "message": "invalid textDocument/hover: required field missing @ $.params.position",
        },
    }
    server.send(notify("textDocument/didOpen", {"textDocument": 7}))  # no one to answer
    log = server.receive()
    assert log["method"] == "window/logMessage"
    assert log["params"]["message"].startswith("invalid textDocument/didOpen: ")
    server.send(BYE)
    assert server.answer(99)["result"] is None
    assert server.proc.wait(HANG) == 0


def test_a_body_that_is_no_message_is_answered(server: Server) -> None:
    server.send(b"Content-Length: 5\r\n\r\n{nope")
    parse = server.answer(None)["error"]
    assert parse["code"] == -32700
    assert parse["message"].startswith("the message is not JSON: ")
    server.send(b"Content-Length: 1\r\n\r\n7")
    assert server.answer(None)["error"] == {"code": -32600, "message": "a message is a JSON object"}
    server.send(BYE)
    assert server.answer(99)["result"] is None
    assert server.proc.wait(HANG) == 0


INVALID = 'not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"'
BATCH = "a batch: LSP has none; send each message alone"
HOVER = {"textDocument": {"uri": "file:///a.yaml"}, "position": {"line": 0, "character": 0}}


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


# Each message, and the answer JSON-RPC 2.0 (and LSP, for ids and methods) gives it; None:
# none (a notification, a response). The first was never answered: the client waited.
SPEC: list[tuple[Any, Any]] = [
    ({"id": 2, "method": "textDocument/hover", "params": HOVER}, _error(2, -32600, INVALID)),
    ({"jsonrpc": "1.0", "id": 3, "method": "shutdown"}, _error(3, -32600, INVALID)),
    ({"method": "initialized", "params": {}}, _error(None, -32600, INVALID)),
    (
        {"jsonrpc": "2.0", "method": 1, "params": "bar"},  # the spec's own example
        _error(None, -32600, '"method" must be a string'),
    ),
    (
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"},
        _error(None, -32600, '"id" must be an integer or a string'),
    ),
    (
        {"jsonrpc": "2.0", "id": True, "method": "shutdown"},
        _error(None, -32600, '"id" must be an integer or a string'),
    ),
    (
        {"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": "bar"},
        _error(4, -32600, '"params" must be an object or an array'),
    ),
    (
        {"jsonrpc": "2.0", "id": 5},
        _error(
            5,
            -32600,
            'neither a request nor a notification ("method") nor a response ("result")',
        ),
    ),
    (
        {"jsonrpc": "2.0", "id": 6, "method": "no/such"},
        _error(6, -32601, "no/such: no such method"),
    ),
    (
        {"jsonrpc": "2.0", "id": "7", "method": "$/unknown"},
        _error("7", -32601, "$/unknown: no such method"),
    ),
    ({"jsonrpc": "2.0", "method": "no/such"}, None),  # a notification: never answered
    ({"jsonrpc": "2.0", "method": "$/unknown", "params": {}}, None),
    ({"jsonrpc": "2.0", "id": 8, "result": None}, None),  # a response to nothing: dropped
    ([], _error(None, -32600, "an empty batch")),
    (
        [{"jsonrpc": "2.0", "id": 9, "method": "shutdown"}, 1, {"jsonrpc": "2.0", "method": "x"}],
        [_error(9, -32600, BATCH), _error(None, -32600, BATCH)],
    ),
    ([{"jsonrpc": "2.0", "method": "initialized", "params": {}}], None),  # notifications only
]


def test_every_message_gets_the_answer_the_spec_gives(server: Server) -> None:
    """Each message of SPEC, then a request that is answered: what came before its answer
    is what the message got (nothing, for a notification or a response)."""
    for n, (message, answer) in enumerate(SPEC, start=100):
        server.send(frame(message))
        server.send(request(n, "textDocument/documentSymbol", _doc("none.yaml")))
        got = []
        while (m := server.receive()) != {"jsonrpc": "2.0", "id": n, "result": []}:
            if not (isinstance(m, dict) and m.get("method") == "window/logMessage"):
                got.append(m)
        assert got == ([] if answer is None else [answer]), message
    server.send(BYE)
    assert server.answer(99)["result"] is None
    assert server.proc.wait(HANG) == 0


def test_exit_without_shutdown_is_status_1(server: Server) -> None:
    server.send(notify("exit"))
    assert server.proc.wait(HANG) == 1


def test_exit_with_requests_waiting_ends_at_once(server: Server) -> None:
    """`exit` while requests wait for a check that will not run (sent together, as an
    editor closing in a hurry does): the process ends, quietly. The request thread
    waited for ever, and Python waits for it at exit; before that, pygls wrote each
    cancelled answer to the closed output and reported the failure by writing again."""
    uri = Path("/nonexistent/big.yaml").as_uri()
    item = {"uri": uri, "languageId": "yaml", "version": 1, "text": spread(300)}
    asks = b"".join(
        request(i, "textDocument/documentSymbol", {"textDocument": {"uri": uri}})
        for i in range(2, 6)
    )
    server.send(notify("textDocument/didOpen", {"textDocument": item}) + asks + notify("exit"))
    assert server.proc.wait(HANG) == 1
    assert "Traceback" not in server.stderr()


def test_a_request_after_shutdown_is_an_error(server: Server) -> None:
    server.send(request(2, "shutdown") + request(3, "textDocument/documentSymbol", _doc("a.yaml")))
    assert server.answer(2)["result"] is None
    assert server.answer(3)["error"] == {
        "code": -32600,
        "message": "textDocument/documentSymbol after shutdown",
    }
    server.send(notify("exit"))
    assert server.proc.wait(HANG) == 0


def test_a_request_right_after_open_waits_for_the_first_check(server: Server) -> None:
    """Answered from the document's first check, not empty because none had ended."""
    item = {"uri": DEMO.as_uri(), "languageId": "yaml", "version": 1, "text": DEMO.read_text()}
    server.send(notify("textDocument/didOpen", {"textDocument": item}))
    server.send(request(2, "textDocument/documentSymbol", {"textDocument": {"uri": item["uri"]}}))
    assert [s["name"] for s in server.answer(2)["result"]] == ["dims", "tensors", "layers"]
    server.send(BYE)
    assert server.answer(99)["result"] is None
    assert server.proc.wait(HANG) == 0


def _open(server: Server, path: Path) -> str:
    uri = path.as_uri()
    item = {"uri": uri, "languageId": "yaml", "version": 1, "text": path.read_text("utf-8")}
    server.send(notify("textDocument/didOpen", {"textDocument": item}))
    return uri


@pytest.mark.slow  # CHECK_SECONDS of the costly plan's check
def test_a_costly_model_holds_no_other_document(server: Server, tmp_path: Path) -> None:
    """One plan whose model code takes seconds to read (its check stops the reading at
    CHECK_SECONDS): another plan's diagnostics, and a hover on it, come while that check
    runs; the costly plan then gets what its check found, with a PC208 notice at its
    `source`. With one check thread, the other plan waited for the costly one."""
    costly = _open(server, costly_layer(tmp_path / "costly"))
    other = _open(server, DEMO)
    lines = DEMO.read_text("utf-8").splitlines()
    line = next(i for i, t in enumerate(lines) if t.startswith("tensors:")) + 1
    hover = {"textDocument": {"uri": other}, "position": {"line": line, "character": 3}}
    server.send(request(2, "textDocument/hover", hover))
    events, published = [], {}
    while costly not in published:
        message = server.receive()
        if message.get("id") == 2:
            assert message["result"] is not None
            events.append("hover")
        elif message.get("method") == "textDocument/publishDiagnostics":
            published[message["params"]["uri"]] = message["params"]["diagnostics"]
            events.append("costly" if message["params"]["uri"] == costly else "other")
    assert events in (["other", "hover", "costly"], ["hover", "other", "costly"])
    notice = [(d["code"], d["range"]["start"]) for d in published[costly] if d["code"] == "PC208"]
    assert notice == [("PC208", {"line": 20, "character": 12})]
    server.send(BYE)
    assert server.answer(99)["result"] is None
    assert server.proc.wait(HANG) == 0


# The server with reads of the model files named block*.py blocked in the read system
# call, on a pipe nobody writes to: a file of a hung network mount.
_BLOCKING_SERVER = """
import os
from plancc.source import modules
r, w = os.pipe()
real = modules.read_regular
def read(path, limit):
    if os.path.basename(path).startswith("block"):
        os.read(r, 1)
    return real(path, limit)
modules.read_regular = read
from plancc.cli.launch import main
main(["lsp"])
"""
BLOCKED_PLAN = """\
plancc: 1
model: m{i}
platform: a2a3
source_root: "."
tensors: {{a: {{shape: [4], dtype: fp32}}}}
layers:
  l:
    source: block.py:f
    stages: [{{name: s}}]
"""


def _published(server: Server, uris: set[str]) -> dict[str, list[dict[str, Any]]]:
    """The next diagnostics of each of ``uris``."""
    got: dict[str, list[dict[str, Any]]] = {}
    while set(got) != uris:
        message = server.receive()
        params = message.get("params") or {}
        if message.get("method") == "textDocument/publishDiagnostics" and params["uri"] in uris:
            got[params["uri"]] = params["diagnostics"]
    return got


@pytest.mark.slow  # READ_SECONDS of the blocked reads
def test_model_files_that_block_on_read_hold_no_check_for_long(tmp_path: Path) -> None:
    """As many plans as there are check threads, each naming model code that blocks on
    read (each check stopped there held its thread for ever: no other document was
    checked again): each is PC208 after READ_SECONDS, another plan is checked by then,
    and once given up on, a blocked file is never waited on again."""
    server = Server(("-c", _BLOCKING_SERVER))
    try:
        server.send(INIT)
        server.answer(1)
        blocked = []
        for i in range(server_module.CHECKERS):
            (tmp_path / f"p{i}").mkdir()
            (tmp_path / f"p{i}" / "block.py").write_text("X = 1\n", "utf-8")
            plan = tmp_path / f"p{i}" / "plan.yaml"
            plan.write_text(BLOCKED_PLAN.format(i=i), "utf-8")
            blocked.append(plan)
        start = time.monotonic()
        uris = {_open(server, plan) for plan in blocked}
        other = _open(server, DEMO)
        got = _published(server, {*uris, other})
        assert time.monotonic() - start < modules.READ_SECONDS + 5
        for plan in blocked:
            [notice] = got[plan.as_uri()]
            assert notice["code"] == "PC208"
            assert notice["range"]["start"] == {"line": 7, "character": 12}
            assert notice["message"] == (
                f"source of layer kind 'l' not checked: {plan.parent}/block.py was not read "
                f"within {modules.READ_SECONDS:g} s: it blocks on read"
            )
        # Changed again, every plan is checked at once: the blocked reads still wait.
        start = time.monotonic()
        for version, uri in enumerate([*sorted(uris), other], start=2):
            text = Path(uri.removeprefix("file://")).read_text("utf-8") + "# edited\n"
            changed = {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": text}],
            }
            server.send(notify("textDocument/didChange", changed))
        again = _published(server, {*uris, other})
        assert time.monotonic() - start < modules.READ_SECONDS
        assert all(
            d[0]["message"].endswith("blocks on read: an earlier read of it still waits")
            for uri, d in again.items()
            if uri != other
        )
        server.send(BYE)
        assert server.answer(99)["result"] is None
    finally:
        server.stop()


def test_plans_whose_model_files_block_hold_no_other_plans_check(tmp_path: Path) -> None:
    """Twice as many plans as there are check slots, each naming model code that blocks
    on read (here for 20 s, its bound): another plan's diagnostics come first, long
    before any of theirs. A check waiting for a read gives its slot back meanwhile;
    before, the blocked checks held every check thread for their bound."""
    server = Server(
        (
            "-c",
            _BLOCKING_SERVER.replace(
                "modules.read_regular = read",
                ("modules.read_regular = read\nmodules.READ_SECONDS = 20.0"),
            ),
        )
    )
    try:
        server.send(INIT)
        server.answer(1)
        blocked = []
        for i in range(2 * server_module.CHECKERS):
            (tmp_path / f"p{i}").mkdir()
            (tmp_path / f"p{i}" / "block.py").write_text("X = 1\n", "utf-8")
            plan = tmp_path / f"p{i}" / "plan.yaml"
            plan.write_text(BLOCKED_PLAN.format(i=i), "utf-8")
            blocked.append(_open(server, plan))
        time.sleep(0.5)  # the blocked checks have started and wait
        start = time.monotonic()
        other = _open(server, DEMO)
        first = None
        while first is None:
            message = server.receive()
            if message.get("method") == "textDocument/publishDiagnostics":
                first = message["params"]["uri"]
        assert first == other
        assert time.monotonic() - start < 15  # not held for the blocked reads' 20 s
    finally:
        server.stop()


def test_exit_ends_at_once_while_a_costly_check_runs(server: Server, tmp_path: Path) -> None:
    """Python's own exit would wait for the check thread, here up to CHECK_SECONDS."""
    _open(server, costly_layer(tmp_path / "costly"))
    time.sleep(0.2)  # the check is reading the model code
    server.send(request(99, "shutdown"))
    assert server.answer(99)["result"] is None
    sent = time.monotonic()
    server.send(notify("exit"))
    assert server.proc.wait(HANG) == 0
    assert time.monotonic() - sent < server_module.CHECK_SECONDS / 2


def _doc(name: str) -> dict[str, Any]:
    return {"textDocument": {"uri": (Path("/nonexistent") / name).as_uri()}}


# -- the work of a request ------------------------------------------------------------------


class Counting(Mapping[Any, Any]):
    """A mapping that counts the entries read from it."""

    def __init__(self, inner: Mapping[Any, Any]) -> None:
        self.inner = inner
        self.reads = 0

    def __getitem__(self, key: Any) -> Any:
        self.reads += 1
        return self.inner[key]

    def __contains__(self, key: object) -> bool:
        self.reads += 1
        return key in self.inner

    def get(self, key: Any, default: Any = None) -> Any:
        self.reads += 1
        return self.inner.get(key, default)

    def __iter__(self) -> Iterator[Any]:
        for key in self.inner:
            self.reads += 1
            yield key

    def __len__(self) -> int:
        return len(self.inner)


def _counted(warms: int) -> tuple[PlanState, list[Counting]]:
    text = spread(warms)
    plan = Path("/nonexistent/big.yaml")
    state = analyse(plan.as_uri(), 1, text, {}, codec=PositionCodec(), docs_url="docs")
    doc = state.result.doc
    assert doc is not None
    # The loader's own tables, under its wrappers: every read goes through them.
    tables = [Counting(t._where) for t in (doc.values, doc.keys, doc.ends)]
    values, keys, ends = Positions(tables[0]), Positions(tables[1]), Ends(tables[2])  # type: ignore[arg-type]
    counted = dataclasses.replace(doc, values=values, keys=keys, ends=ends)
    result = dataclasses.replace(state.result, doc=counted)
    return dataclasses.replace(state, result=result), tables


@pytest.mark.parametrize("feature", ["symbols", "inlay hints"])
def test_a_request_reads_the_plan_once(feature: str) -> None:
    """The outline and the inlay hints read each node's position a bounded number of
    times, so twice the warms is twice the work (one walk of the document per symbol
    was quadratic: 78 s at 500 warms)."""
    everything = T.Range(T.Position(0, 0), T.Position(10**6, 0))
    reads = []
    for warms in (100, 200):
        state, tables = _counted(warms)
        assert state.index is not None  # built first: a request on a built index is counted
        before = sum(t.reads for t in tables)
        if feature == "symbols":
            assert len(outline.symbols(state)[-1].children or ()) == warms // 10
        else:
            assert len(outline.inlay_hints(state, everything)) == warms
        reads.append(sum(t.reads for t in tables) - before)
    assert reads[1] <= 2.1 * reads[0], reads


# -- the event loop -------------------------------------------------------------------------


class Wire:
    """The server's protocol in this process, its output parsed into messages."""

    def __init__(self, **initialize: Any) -> None:
        self.server = create()
        self.sent: list[dict[str, Any]] = []
        self.server.protocol.set_writer(self)
        params = {"capabilities": {}, **initialize}
        self.give({"id": 0, "method": "initialize", "params": params})

    def write(self, data: bytes) -> None:
        self.sent.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

    def close(self) -> None:
        pass

    def give(self, message: dict[str, Any]) -> None:
        protocol = self.server.protocol
        protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", **message}))

    async def open(self, uri: str, text: str) -> dict[str, Any]:
        """``uri`` opened with ``text`` (version 1), once its diagnostics are out: its item."""
        item = {"uri": uri, "languageId": "yaml", "version": 1, "text": text}
        self.give({"method": "textDocument/didOpen", "params": {"textDocument": item}})
        await self.until(lambda m: (m.get("params") or {}).get("uri") == uri)
        return item

    def change(self, uri: str, version: int, text: str) -> None:
        changed = {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": text}],
        }
        self.give({"method": "textDocument/didChange", "params": changed})

    def hold_checks(self) -> threading.Event:
        """Every check slot held until the event is set: no check computes meanwhile."""
        gate = threading.Event()
        for _ in range(server_module.CHECKERS):
            self.server.slots.acquire()

        def free() -> None:
            gate.wait(HANG)
            for _ in range(server_module.CHECKERS):
                self.server.slots.release()

        threading.Thread(target=free, daemon=True).start()
        return gate

    async def until(self, found: Any) -> dict[str, Any]:
        for _ in range(HANG * 100):
            for message in self.sent:
                if found(message):
                    return message
            await asyncio.sleep(0.01)
        raise AssertionError(f"not sent: {self.sent}")


@pytest.mark.asyncio
async def test_a_diagnostic_never_waits_behind_a_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """An outline request held in its thread (as a slow one would be) while the plan
    changes: the new text's diagnostics are published meanwhile, and the request is
    answered once released. On the event loop, the request would hold everything."""
    wire = Wire()
    events: list[str] = []
    release = threading.Event()

    def held(state: PlanState) -> list[T.DocumentSymbol]:
        events.append("request started")
        release.wait(HANG)
        events.append("request answered")
        return []

    monkeypatch.setattr(outline, "symbols", held)
    uri, text = DEMO.as_uri(), DEMO.read_text("utf-8")
    item = await wire.open(uri, text)
    wire.give({"id": 2, "method": "textDocument/documentSymbol", "params": {"textDocument": item}})
    while "request started" not in events:  # a request that came after the change would wait
        await asyncio.sleep(0.01)
    wire.change(uri, 2, text + "#")
    await wire.until(lambda m: (m.get("params") or {}).get("version") == 2)
    events.append("published")
    release.set()
    assert (await wire.until(lambda m: m.get("id") == 2))["result"] == []
    assert events == ["request started", "published", "request answered"]


@pytest.mark.asyncio
async def test_a_change_leaves_no_bookkeeping_behind() -> None:
    """pygls kept the future of every notification's handler (each change's: 2.2 KiB,
    48 → 92 MiB over 20,000 edits); every one is freed once handled, so the bookkeeping
    is the same after 300 changes as after one (bench/lsp.py measures the memory)."""
    wire = Wire()
    uri, text = DEMO.as_uri(), DEMO.read_text("utf-8")
    await wire.open(uri, text)
    futures = wire.server.protocol._request_futures
    for version in range(2, 302):
        wire.change(uri, version, text + f"# {version}\n")
        if version % 100 == 1:
            await wire.until(lambda m, v=version: (m.get("params") or {}).get("version") == v)
    await wire.until(lambda m: (m.get("params") or {}).get("version") == 301)
    wire.give(
        {"id": 7, "method": "textDocument/documentSymbol", "params": {"textDocument": {"uri": uri}}}
    )
    await wire.until(lambda m: m.get("id") == 7)
    assert len(futures) == 0, list(futures)[:3]
    assert len(wire.server.changes) == len(wire.server.seen) == 1


def test_a_long_answer_pauses_while_a_check_runs() -> None:
    """The outline of 100 warms, made while a check runs (``pause`` waits on the idle
    event, cleared): it stops at its first symbol, and goes on once the check ends.
    A request that came first thus never holds a check for more than a symbol."""
    idle = threading.Event()
    plan = Path("/nonexistent/big.yaml")
    state = analyse(
        plan.as_uri(), 1, spread(100), {}, codec=PositionCodec(), docs_url="docs", pause=idle.wait
    )
    made: list[Any] = []
    worker = threading.Thread(target=lambda: made.append(outline.symbols(state)))
    worker.start()
    worker.join(0.5)  # long enough to make the whole outline many times over
    assert worker.is_alive()
    assert made == []
    idle.set()  # the check ended
    worker.join(HANG)
    assert len(made[0][-1].children) == 10


@pytest.mark.asyncio
async def test_a_request_after_a_change_answers_from_its_text() -> None:
    """A request that comes after a change waits for that change's diagnostics, since its
    position refers to the new text, even while the check has not started (held here
    behind the other holders of every check slot): the outline names the dim the change
    added, not the text before it."""
    wire = Wire()
    uri, text = DEMO.as_uri(), DEMO.read_text("utf-8")
    added = text.replace("dims:\n", "dims:\n  added_dim: 8\n", 1)
    assert added != text
    item = await wire.open(uri, text)
    gate = wire.hold_checks()
    wire.change(uri, 2, added)
    wire.give({"id": 2, "method": "textDocument/documentSymbol", "params": {"textDocument": item}})
    await asyncio.sleep(0.2)  # time to answer, were it answered from the old text
    assert [m for m in wire.sent if m.get("id") == 2] == []
    gate.set()
    dims = (await wire.until(lambda m: m.get("id") == 2))["result"][0]
    assert dims["children"][0]["name"] == "added_dim"


# -- where the model code is ---------------------------------------------------------------

LAYER = Path(__file__).parent / "data" / "source" / "warmcall"


def _elsewhere(tmp_path: Path) -> Path:
    """The `warmcall` plan whose `source_root` names no directory: its checkout is elsewhere."""
    plan = tmp_path / "plan" / "mlp.yaml"
    plan.parent.mkdir()
    text = (LAYER / "extract.yaml").read_text("utf-8")
    plan.write_text(text.replace('source_root: "."', "source_root: nowhere"), "utf-8")
    return plan


def _codes(wire: Wire, uri: str, version: int | None = None) -> list[str]:
    published = [
        m["params"]
        for m in wire.sent
        if m.get("method") == "textDocument/publishDiagnostics"
        and m["params"]["uri"] == uri
        and (version is None or m["params"].get("version") == version)
    ]
    return [d["code"] for d in published[-1]["diagnostics"]]


@pytest.mark.asyncio
@pytest.mark.parametrize("given", ["absolute", "relative to the workspace"])
async def test_the_source_root_is_an_initialization_option(tmp_path: Path, given: str) -> None:
    plan = _elsewhere(tmp_path)
    root = str(LAYER) if given == "absolute" else os.path.relpath(LAYER, tmp_path)
    wire = Wire(initializationOptions={"sourceRoot": root}, rootUri=tmp_path.as_uri())
    uri = plan.as_uri()
    await wire.open(uri, plan.read_text("utf-8"))
    assert _codes(wire, uri) == ["PC107"]


@pytest.mark.asyncio
@pytest.mark.skipif(
    not os.environ.get("PLANCC_PYPTO_LIB_FORK"), reason="PLANCC_PYPTO_LIB_FORK is not set"
)
async def test_the_flash_plan_with_its_checkout_elsewhere() -> None:
    """The shipped plan's `source_root` is not where pypto-lib is checked out here: with
    `sourceRoot`, its three layers are read (their notices: `hc_pre`, chosen at import
    time), no PC200."""
    wire = Wire(initializationOptions={"sourceRoot": os.environ["PLANCC_PYPTO_LIB_FORK"]})
    uri = FLASH.as_uri()
    await wire.open(uri, FLASH.read_text("utf-8"))
    assert _codes(wire, uri) == ["PC208", "PC208", "PC208"]


@pytest.mark.asyncio
async def test_the_source_root_setting_checks_the_open_plans_again(tmp_path: Path) -> None:
    """`plancc.sourceRoot` in the workspace settings (`workspace/didChangeConfiguration`):
    each open plan is checked again from it; unset, from the plan's own `source_root`."""
    plan = _elsewhere(tmp_path)
    wire = Wire()
    uri = plan.as_uri()
    await wire.open(uri, plan.read_text("utf-8"))
    assert _codes(wire, uri) == ["PC200", "PC107"]
    for root, codes in ((str(LAYER), ["PC107"]), (None, ["PC200", "PC107"])):
        count = len(wire.sent)
        settings = {"settings": {"plancc": {"sourceRoot": root}}}
        wire.give({"method": "workspace/didChangeConfiguration", "params": settings})
        await wire.until(lambda m, n=count: m in wire.sent[n:] and "uri" in (m.get("params") or {}))
        assert _codes(wire, uri) == codes


@pytest.mark.asyncio
async def test_the_source_root_setting_is_asked_of_a_client_that_can_say(tmp_path: Path) -> None:
    """A client with `workspace.configuration` is asked for the `plancc` section once
    initialized (Neovim and VS Code answer from their settings)."""
    plan = _elsewhere(tmp_path)
    wire = Wire(capabilities={"workspace": {"configuration": True}})
    uri = plan.as_uri()
    await wire.open(uri, plan.read_text("utf-8"))
    wire.give({"method": "initialized", "params": {}})
    asked = await wire.until(lambda m: m.get("method") == "workspace/configuration")
    assert asked["params"] == {"items": [{"section": "plancc"}]}
    count = len(wire.sent)
    wire.give({"id": asked["id"], "result": [{"sourceRoot": str(LAYER)}]})
    await wire.until(lambda m, n=count: m in wire.sent[n:] and "uri" in (m.get("params") or {}))
    assert _codes(wire, uri) == ["PC107"]


# -- the garbage collector -------------------------------------------------------------------


def _every_answer(state: PlanState) -> None:
    end = T.Position(10**6, 0)
    everything = T.Range(T.Position(0, 0), end)
    middle = T.Position(state.text.source.count("\n") // 2, 4)
    for position in (middle, end):
        hover.hover(state, position)
        completion.complete(state, state.text.source, position)
        navigation.definition(state, position, {})
        navigation.references(state, position, True)
        navigation.prepare_rename(state, position)
    outline.symbols(state)
    outline.inlay_hints(state, everything)
    actions.code_actions(state, to_lsp(state))


@pytest.mark.parametrize("name", ["flash", "spread", "demo"])
def test_a_state_and_its_answers_hold_no_cycle(name: str) -> None:
    """A state, with everything each feature made from it, is freed by reference counting
    when replaced, not at the collector's next full walk. (The index once kept its
    walker, which kept the index: every state of an editing session stayed in memory
    until then.)"""
    path, text = {
        "flash": (FLASH, FLASH.read_text("utf-8")),
        "spread": (Path("/nonexistent/big.yaml"), spread(100)),
        "demo": (DEMO, DEMO.read_text("utf-8")),
    }[name]
    _every_answer(analyse(path.as_uri(), 1, text, {}, codec=PositionCodec(), docs_url="d"))
    gc.collect()
    gc.disable()
    try:
        gc.set_debug(gc.DEBUG_SAVEALL)
        state = analyse(path.as_uri(), 1, text, {}, codec=PositionCodec(), docs_url="d")
        assert state.result.plan is not None
        _every_answer(state)
        del state
        gc.collect()
        left = [type(o).__qualname__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []


@pytest.mark.asyncio
async def test_a_document_closed_during_its_check_gets_no_diagnostics() -> None:
    """Closing clears a document's diagnostics; a check that was running then (held here
    behind another job of the check thread) publishes nothing after it, and keeps no
    state: the editor would show diagnostics for a file no longer open."""
    wire = Wire()
    uri, text = DEMO.as_uri(), DEMO.read_text("utf-8")
    await wire.open(uri, text)
    gate = wire.hold_checks()
    wire.change(uri, 2, text)
    await asyncio.sleep(0.05)  # the change's check is queued behind the gate
    wire.give({"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
    gate.set()
    while uri in wire.server.tasks:
        await asyncio.sleep(0.01)
    published = [
        m["params"] for m in wire.sent if m.get("method") == "textDocument/publishDiagnostics"
    ]
    assert published[-1] == {"uri": uri, "diagnostics": []}
    assert uri not in wire.server.plans


@pytest.mark.asyncio
async def test_typing_starves_no_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """Changes to one plan in a row, each coming before the last one's check ends (a
    key held down, or a plan whose check is slower than typing), keep the check thread
    busy. A request on another plan, and one on the plan being typed in, are answered
    while the changes go on: a request waits for its own plan's changes, gives way to
    a check once, and no more."""
    real = server_module.analyse

    def slow(*args: Any, **kwargs: Any) -> PlanState:
        time.sleep(0.06)  # a 60 ms check
        return real(*args, **kwargs)

    monkeypatch.setattr(server_module, "analyse", slow)
    wire = Wire()
    text = DEMO.read_text("utf-8")
    typed, other = (DEMO.parent / "typed.yaml").as_uri(), DEMO.as_uri()
    for uri in (typed, other):
        await wire.open(uri, text)
    line = next(i for i, t in enumerate(text.splitlines()) if t.startswith("tensors:")) + 1
    asked: dict[int, float] = {}
    for version in range(2, 42):  # one change each 30 ms for 1.2 s
        wire.change(typed, version, f"{text}# {version}\n")
        if version in (3, 4):
            msg_id, uri = (2, other) if version == 3 else (3, typed)
            hover = {"textDocument": {"uri": uri}, "position": {"line": line, "character": 3}}
            wire.give({"id": msg_id, "method": "textDocument/hover", "params": hover})
            asked[msg_id] = time.monotonic()
        await asyncio.sleep(0.03)
        if all(any(m.get("id") == i for m in wire.sent) for i in (2, 3)):
            break
    still_typing = version < 41
    answers = [m for m in wire.sent if m.get("id") in (2, 3)]
    assert still_typing, "a request waited for the changes to end"
    assert [a["result"] is not None for a in answers] == [True, True]


def test_a_request_gives_way_to_a_check_for_a_bounded_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A check of another plan's costly model code runs for up to CHECK_SECONDS: a request
    waits for it at most PAUSE_SECONDS, then shares the interpreter with it."""
    monkeypatch.setattr(server_module, "PAUSE_SECONDS", 0.1)
    server = create()
    server.idle.clear()  # a check runs, and goes on
    server.yields = 1
    waited = threading.Thread(target=server.pause)
    waited.start()
    waited.join(5)
    assert not waited.is_alive()


def test_a_request_gives_way_to_one_check_only() -> None:
    """The request thread's pause waits for a running check the first time in a request,
    and not again: a check of a change that comes during a request goes first, but
    checks in a row cannot hold a request for ever."""
    server = create()
    server.idle.clear()  # a check runs
    server.yields = 1
    waited = threading.Thread(target=server.pause)
    waited.start()
    waited.join(0.2)
    assert waited.is_alive()  # it gives way to the running check
    server.idle.set()
    waited.join(HANG)
    server.idle.clear()  # the next check
    again = threading.Thread(target=server.pause)
    again.start()
    again.join(HANG)
    assert not again.is_alive()  # once is all


def test_a_config_that_is_a_fifo_is_never_waited_on(tmp_path: Path) -> None:
    """The editor reads a plan's `config:` as `validate` does: a FIFO is PC005 at once,
    and completion and go-to-definition of a config key find nothing, without blocking."""
    os.mkfifo(tmp_path / "config.json")
    text = (
        "plancc: 1\nmodel: m\nplatform: a2a3\nconfig: config.json\n"
        "dims: {D: hidden_size}\ntensors: {w: {shape: [D], dtype: bf16}}\n"
        "layers: {k: {stages: [{name: s, reads: [w]}]}}\n"
    )
    path = tmp_path / "p.yaml"
    path.write_text(text, "utf-8")

    def hung(*_: object) -> None:
        raise AssertionError("a read of the FIFO blocked")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(10)
    try:
        state = server_module.analyse(
            path.as_uri(), 1, text, {}, codec=PositionCodec(), docs_url=""
        )
        assert [d.code for d in state.result.diagnostics] == ["PC005"]
        assert completion.config_keys(state, int) == []
        assert navigation._config_key(state, "hidden_size", {}) is None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
