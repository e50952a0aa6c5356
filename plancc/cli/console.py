"""Process plumbing of the command line: streams, exit codes, one-line errors.

Exit codes: 0 clean or warnings only; 1 errors (or warnings under --strict);
2 usage or I/O errors, in one line on stderr. No input produces a traceback: an
unexpected exception prints one line (``--debug`` shows the traceback). The
commands themselves are in ``plancc.cli``; typer is imported only by ``main``, so
that ``plancc.cli.launch`` can run a command without it.
"""

from __future__ import annotations

import codecs
import contextlib
import importlib
import io
import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn

from plancc.usage import UsageError

if TYPE_CHECKING:
    import typer

state = {"debug": False}


class OutputError(Exception):
    """Standard output cannot take what plancc prints (a full disk, a closed stream)."""


def out(text: str) -> None:
    """Print to stdout, flushed now, so a write error is reported here, in one line,
    not at interpreter exit."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc.strerror or str(exc)) from None


def err(line: str) -> None:
    """One line on stderr, flushed now; nothing when stderr is closed (``2>&-``), where
    the exit code is all there is to say."""
    if sys.stderr is None:
        return
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _fail(message: str) -> int:
    err(f"plancc: {message}")
    return 2


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null, so that flushing it at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (in-process tests): nothing to flush
        pass


def guarded(fn: Callable[[], int]) -> int:
    """Run a command body; its exit code. Usage errors are one line and exit 2,
    internal errors too."""
    try:
        return fn()
    except BrokenPipeError:
        # The reader went away (`plancc rules | head -1`): nothing left to say to anyone.
        _stdout_to_devnull()
        return 2
    except OutputError as exc:
        _stdout_to_devnull()
        return _fail(f"cannot write output: {exc}")
    except UsageError as exc:
        return _fail(str(exc))
    except Exception as exc:
        if state["debug"]:
            import traceback  # noqa: PLC0415 (only under --debug)

            traceback.print_exc()
        return _fail(f"internal error: {type(exc).__name__}: {exc}")


def _escape_unencodable(exc: UnicodeError) -> tuple[str, int]:
    """A codec error handler: what the stream cannot encode is written ``\\uXXXX``, an
    escape that keeps JSON and SARIF valid JSON (non-ASCII only occurs in their strings)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = []
    for char in exc.object[exc.start : exc.end]:
        code = ord(char)
        if code > 0xFFFF:  # a surrogate pair, as JSON spells characters beyond the BMP
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out), exc.end


def _tolerant_streams() -> None:
    """Never fail on a character the output's encoding lacks (``PYTHONIOENCODING=ascii``,
    a surrogate-escaped file name): print it escaped instead."""
    codecs.register_error("plancc.escape", _escape_unencodable)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            with contextlib.suppress(OSError, ValueError):  # closed, or not reconfigurable
                stream.reconfigure(errors="plancc.escape")


def _click_exceptions() -> ModuleType:
    """click's exceptions: typer >= 0.20 vendors click as ``typer._click``."""
    try:
        return importlib.import_module("typer._click.exceptions")
    except ImportError:
        return importlib.import_module("click.exceptions")


def _usage_message(exc: Exception) -> str:
    """A click usage error in one line: ``no such option: --bogus (try 'plancc validate
    --help')``."""
    ce = _click_exceptions()
    no_args = getattr(ce, "NoArgsIsHelpError", ())
    if isinstance(exc, no_args):  # a bare `plancc`: its message is the whole help
        message = "missing command"
    else:
        message = exc.format_message() if isinstance(exc, ce.ClickException) else str(exc)
        message = " ".join(line.strip() for line in message.splitlines() if line.strip())
        # typer checks values with pydantic, whose messages open with their error type.
        message = message.replace(": Value error, ", ": ", 1)
        message = message.rstrip(".")
        if message[:1].isupper() and message[1:2].islower():  # "No such …", not "PC…"
            message = message[0].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, ce.UsageError) and ctx is not None:
        message += f" (try '{ctx.command_path} --help')"
    return message or "usage error"


def run(command: Callable[[], int | None], *, at_once: bool = False) -> NoReturn:
    """Run the command line and exit 0/1/2 as documented. Output goes to a stdout that
    may be closed, full, or unable to encode a character: each is one line on stderr.

    ``at_once``: once the output is flushed, leave without tearing down the objects
    (a plan of 10,000 warms is a million of them; freeing them one by one costs a
    tenth of the run). Only for a process that ends here."""
    if sys.stdout is None:  # started with stdout closed (`plancc … >&-`)
        if sys.stderr is not None:
            sys.stderr.write("plancc: cannot write output: standard output is closed\n")
        sys.exit(2)
    _tolerant_streams()
    try:
        code = command()
        sys.stdout.flush()
    except BrokenPipeError:  # --help or --version into a closed pipe
        _stdout_to_devnull()
        sys.exit(2)
    except OSError as exc:  # --help or --version into a full disk
        _stdout_to_devnull()
        err(f"plancc: cannot write output: {exc.strerror or exc}")
        sys.exit(2)
    code = code if isinstance(code, int) else 0
    if at_once:
        if sys.stderr is not None:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def main(app: typer.Typer) -> NoReturn:
    """The console script through typer. A usage error is one line on stderr (not
    click's usage block) and nothing on stdout."""
    import typer  # noqa: PLC0415 (plancc.cli.launch runs validate and build without it)

    ce = _click_exceptions()

    def command() -> int | None:
        try:
            code: int | None = app(prog_name="plancc", standalone_mode=False)  # also for --help
        except ce.ClickException as exc:
            err(f"plancc: {_usage_message(exc)}")
            return int(exc.exit_code)
        except typer.Abort:
            err("plancc: aborted")
            return 1
        return code

    run(command)
