"""The wire: LSP's base protocol read from stdin so that no message stops the server.

pygls's own reader allocates whatever body a header announces (a
``Content-Length`` of 10¹² kills the process with MemoryError), drops a request
whose params do not fit its method without an answer (the client waits for
ever) and ends every `exit` with status 0. This loop reads the messages
instead, and hands each one to pygls's protocol:

- a body over ``MAX_MESSAGE`` is refused: an error response with a null id
  (its id is in the body, unread) and an error shown to the user; the body is
  then read and dropped in chunks, so the next message is read where it
  starts. A header line is read at most ``MAX_HEADER`` bytes at a time;
- a body that is not JSON gets −32700 (ParseError); a message that is no valid
  JSON-RPC 2.0 request, notification or response (no `"jsonrpc": "2.0"`, a
  `method` that is not a string, an `id` that is neither an integer nor a string,
  `params` that are neither an object nor an array, neither `method` nor
  `result`/`error`) gets −32600 (InvalidRequest), with its id when it has a valid
  one, else null; a malformed response is logged, never answered (nothing
  answers a response);
- a batch (a JSON array: JSON-RPC has them, LSP does not) gets one −32600 per
  request in it, in an array, and none for its notifications and responses; an
  empty one a single −32600;
- a request for a method the server does not serve gets −32601
  (MethodNotFound), `$/` ones included, as LSP asks; such a notification is
  dropped (LSP lets a server ignore them);
- a request whose params do not fit its method gets −32602 (InvalidParams)
  naming what does not fit; a notification cannot be answered, so it is logged;
- a request after `shutdown` gets −32600, as the protocol asks;
- `exit` ends the loop with pygls's status: 0 after `shutdown`, 1 without.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO

import cattrs
from lsprotocol import types as lsp
from lsprotocol.types import CANCEL_REQUEST as CANCEL
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

# The largest body read: a plan is at most 4 MiB (MAX_BYTES), and JSON escaping
# grows text at most sixfold (a control character is `\u00XX`).
MAX_MESSAGE = 32 * 1024 * 1024
MAX_HEADER = 1024
_CHUNK = 1024 * 1024
_LENGTH = re.compile(rb"Content-Length: *(\d+)\r?\n", re.IGNORECASE)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

logger = logging.getLogger(__name__)


def run(
    server: LanguageServer,
    reader: BinaryIO,
    writer: BinaryIO,
    *,
    shut_down: Callable[[], bool],
) -> int | None:
    """Serve until `exit` (its status) or the end of input (None)."""
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_answered)
    output = _Writer(writer)
    server.protocol.set_writer(output)
    reading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="plancc-read")
    wire = _Wire(server, reader, output, reading, shut_down)
    try:
        asyncio.run(wire.serve())
    except SystemExit as exc:  # pygls's `exit`
        return exc.code if isinstance(exc.code, int) else 1
    finally:
        reading.shutdown(wait=False)
    return None


class _Writer:
    """pygls's writer on the output stream. Once the stream is closed (`exit` closes it)
    or the client has gone (a broken pipe), what is still written is dropped: answers to
    requests still running, and pygls's errors for their cancellation, which it reports
    by writing again (50,000 tracebacks and 5 s before the process could end)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.gone = False

    def close(self) -> None:
        self.gone = True
        self.stream.close()

    def write(self, data: bytes) -> None:
        if self.gone:
            return
        try:
            self.stream.write(data)
            self.stream.flush()
        except (OSError, ValueError):  # a broken pipe, or the stream closed under it
            self.gone = True


class _Wire:
    def __init__(
        self,
        server: LanguageServer,
        reader: BinaryIO,
        writer: _Writer,
        reading: ThreadPoolExecutor,
        shut_down: Callable[[], bool],
    ) -> None:
        self.server = server
        self.protocol = server.protocol
        self.reader = reader
        self.writer = writer
        self.reading = reading
        self.shut_down = shut_down

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        while (message := await loop.run_in_executor(self.reading, self._receive)) is not None:
            length, body = message
            if body is None:
                self._refuse(length)
                if not await loop.run_in_executor(self.reading, self._skip, length):
                    return
                continue
            if len(body) < length:
                return  # the input ended inside the body
            self._handle(body)

    def _receive(self) -> tuple[int, bytes | None] | None:
        """In the reading thread, a whole message at a time (each hand-over between threads
        waits for the interpreter, which a request may hold): the announced length and the
        body, None for a body over the limit (unread), None at the end of input."""
        length = self._headers()
        if length is None:
            return None
        return length, None if length > MAX_MESSAGE else self.reader.read(length)

    def _headers(self) -> int | None:
        """The header block's Content-Length (None at the end of input). Lines before a
        Content-Length and its blank line are skipped, as a long line is, piece by piece."""
        length = None
        while line := self.reader.readline(MAX_HEADER):
            if line in (b"\r\n", b"\n"):
                if length is not None:
                    return length
            elif m := _LENGTH.fullmatch(line):
                length = int(m.group(1))
        return None

    def _skip(self, length: int) -> bool:
        """Read and drop ``length`` bytes: whether the input goes on after them."""
        while length > 0:
            chunk = self.reader.read(min(length, _CHUNK))
            if not chunk:
                return False
            length -= len(chunk)
        return True

    def _refuse(self, length: int) -> None:
        why = (
            f"plancc: refused a message of {length:,} bytes (the limit is {MAX_MESSAGE:,}); "
            "it is skipped"
        )
        logger.error(why)
        self._reply(None, INVALID_REQUEST, why)
        self.server.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, why))

    def _handle(self, body: bytes) -> None:
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            self._reply(None, PARSE_ERROR, f"the message is not JSON: {exc}")
            return
        if isinstance(data, list):
            self._batch(data)
            return
        if not self._admitted(data):
            return
        method, msg_id = data.get("method"), data.get("id")
        is_request = method is not None and "id" in data
        try:
            message = self.protocol.structure_message(data)
        except JsonRpcException as exc:
            why = f"invalid {method}: {_why(exc)}"
            if is_request:
                self._reply(msg_id, exc.code, why)
            else:
                self._log(why)
            return
        if is_request and self.shut_down():
            self._reply(msg_id, INVALID_REQUEST, f"{method} after shutdown")
            return
        try:
            self.protocol.handle_message(message)
        except Exception:  # pygls's own reader does the same: log it, go on serving
            logger.exception("Unable to handle message")

    def _admitted(self, data: Any) -> bool:
        """Whether ``data`` is a message pygls is to handle; if not, the answer the spec
        gives it is sent (or, for a response, nothing: it is logged)."""
        if not isinstance(data, dict):
            self._reply(None, INVALID_REQUEST, "a message is a JSON object")
            return False
        why = invalid(data)
        if why is not None:
            if "method" not in data and ("result" in data or "error" in data):
                self._log(f"plancc: dropped an invalid response: {why}")
            else:
                self._reply(_id(data), INVALID_REQUEST, why)
            return False
        method = data.get("method")
        if method is not None and not self._served(method):
            if "id" in data:
                self._reply(data["id"], METHOD_NOT_FOUND, f"{method}: no such method")
            return False  # a notification the server does not serve: ignored, as LSP allows
        return True

    def _batch(self, items: list[Any]) -> None:
        """JSON-RPC's answer to a batch the server does not take: an error per request in
        it (its notifications and responses get none, and no answer at all is sent when
        none is left), an empty batch one error."""
        if not items:
            self._reply(None, INVALID_REQUEST, "an empty batch")
            return
        why = "a batch: LSP has none; send each message alone"
        errors = [
            _error(_id(item) if isinstance(item, dict) else None, INVALID_REQUEST, why)
            for item in items
            if not (
                isinstance(item, dict)
                and invalid(item) is None
                and ("id" not in item or "method" not in item)
            )
        ]
        if errors:
            self._write(errors)

    def _served(self, method: str) -> bool:
        fm = self.protocol.fm
        return method in fm.builtin_features or method in fm.features or method == CANCEL

    def _log(self, why: str) -> None:
        self.server.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, why))

    def _reply(self, msg_id: Any, code: int, message: str) -> None:
        """An error response, written here: pygls would leave out a null id, which the
        protocol wants."""
        self._write(_error(msg_id, code, message))

    def _write(self, message: Any) -> None:
        body = json.dumps(message).encode()  # ASCII
        self.writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    """An error response; an id that is no valid one is null."""
    if not _valid_id(msg_id):
        msg_id = None
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _valid_id(msg_id: Any) -> bool:
    """An id as LSP has it: an integer or a string (JSON-RPC's null is for errors)."""
    return isinstance(msg_id, str) or (isinstance(msg_id, int) and not isinstance(msg_id, bool))


def _id(data: dict[str, Any]) -> Any:
    msg_id = data.get("id")
    return msg_id if _valid_id(msg_id) else None


def invalid(data: dict[str, Any]) -> str | None:
    """Why ``data`` is no JSON-RPC 2.0 message as LSP sends them, or None."""
    if data.get("jsonrpc") != "2.0":
        return 'not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"'
    if "method" in data:
        if not isinstance(data["method"], str):
            return '"method" must be a string'
        if "id" in data and not _valid_id(data["id"]):
            return '"id" must be an integer or a string'
        # null as if left out: clients send `shutdown` so, and nothing is lost by it.
        if data.get("params") is not None and not isinstance(data["params"], dict | list):
            return '"params" must be an object or an array'
        return None
    if "result" not in data and "error" not in data:
        return 'neither a request nor a notification ("method") nor a response ("result")'
    if "id" not in data or not (data["id"] is None or _valid_id(data["id"])):
        return 'a response\'s "id" must be an integer, a string or null'
    if "result" in data and "error" in data:
        return 'a response has "result" or "error", not both'
    error = data.get("error", {})
    if "error" in data and not (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and isinstance(error.get("message"), str)
    ):
        return 'a response\'s "error" must be an object with an integer "code" and a "message"'
    return None


class Protocol(LanguageServerProtocol):
    """pygls's protocol, freeing each message's bookkeeping once it is handled.

    pygls keeps the future of every handler it runs in ``_request_futures`` (so that a
    request can be cancelled) and takes it out only when it answers a request: a
    notification's (each `didChange`: pygls's own handler, a generator, runs ours) was
    kept for ever, 2.2 KiB a change (48 → 92 MiB over 20,000 edits). Here every handler's
    future leaves when it is done."""

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Callable[[Any], None],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        def done(future: Any) -> None:
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)


def _answered(record: logging.LogRecord) -> bool:
    """Whether pygls's log record is worth its traceback on stderr: not for a message
    this module answered, nor for a request refused on purpose (a rename to a keyword)."""
    if isinstance(record.msg, str) and record.msg.startswith("Unable to deserialize"):
        return False
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, JsonRpcException) or isinstance(exc, JsonRpcInternalError)


def _why(exc: JsonRpcException) -> str:
    """What does not fit, in the protocol's names (``textDocument``, not ``text_document``)."""
    cause = exc.__cause__
    if isinstance(cause, Exception):
        try:
            found = cattrs.transform_error(cause)
        except Exception:  # not a structuring error: pygls's own message
            found = []
        if found:
            return "; ".join(re.sub(r"_([a-z])", lambda m: m.group(1).upper(), f) for f in found)
    return exc.message
