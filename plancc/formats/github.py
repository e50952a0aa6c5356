"""The github format: workflow commands that annotate the diagnostics in a pull request."""

from __future__ import annotations

from plancc.api import BuildResult, Validation
from plancc.diagnostics import Diagnostic, printable
from plancc.formats.base import Options, OutputFormat, allowed_by, stale_message
from plancc.formats.text import build_text


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def github(report: Validation, *, show_allowed: bool = False) -> str:
    """GitHub workflow commands: one ``::error``/``::warning`` annotation per diagnostic;
    with ``show_allowed``, a ``::notice`` per silenced warning, giving its reason."""
    lines = []
    for d in report.diagnostics:
        message = d.message + (f"\n{d.hint}" if d.hint else "")
        lines.append(f"::{d.severity.value} {_props(d, d.code)}::{_escape_data(message)}")
    for a in report.allowed if show_allowed else ():
        d = a.diagnostic
        message = f"{d.message}\nallowed: {allowed_by(a)}"
        lines.append(f"::notice {_props(d, f'{d.code} (allowed)')}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines)


def _props(d: Diagnostic, title: str) -> str:
    file = _escape_property(printable(d.file))
    return f"file={file},line={d.line},col={d.col},title={_escape_property(title)}"


def _validate(report: Validation, o: Options) -> str:
    return github(report, show_allowed=o.show_allowed)


def _build(result: BuildResult, o: Options) -> str:
    """Annotations for the warnings and each missing or stale output, then the text
    format's lines without its diagnostics."""
    out = github(result.report, show_allowed=o.show_allowed)
    for f in result.out_of_date:
        path = f.path.as_posix()
        out += (
            f"::error file={_escape_property(path)},title=plancc build --check::"
            f"{_escape_data(stale_message(f))}\n"
        )
    return out + build_text(result, o, diagnostics=False)


FORMAT = OutputFormat("github", _validate, _build)
