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
- a body that is not JSON gets −32700 (ParseError), one that is not a JSON
  object −32600 (InvalidRequest), both with a null id;
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
        if not isinstance(data, dict):
            self._reply(None, INVALID_REQUEST, "a message is a JSON object")
            return
        method, msg_id = data.get("method"), data.get("id")
        is_request = isinstance(method, str) and "id" in data
        try:
            message = self.protocol.structure_message(data)
        except JsonRpcException as exc:
            why = f"invalid {method}: {_why(exc)}"
            if is_request:
                self._reply(msg_id, exc.code, why)
            else:
                self.server.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, why))
            return
        if is_request and self.shut_down():
            self._reply(msg_id, INVALID_REQUEST, f"{method} after shutdown")
            return
        try:
            self.protocol.handle_message(message)
        except Exception:  # pygls's own reader does the same: log it, go on serving
            logger.exception("Unable to handle message")

    def _reply(self, msg_id: Any, code: int, message: str) -> None:
        """An error response, written here: pygls would leave out a null id, which the
        protocol wants."""
        if not isinstance(msg_id, (int, str)):
            msg_id = None
        error = {"code": code, "message": message}
        body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error}).encode()  # ASCII
        self.writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))


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
