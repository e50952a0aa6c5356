"""The editor fuzz target: incremental edits, as an LSP client sends them, keep the
server's text the client's.

A client counts lines as LSP does (a line ends at LF, CRLF or CR, nothing else) and
columns in UTF-16 code units; it sends each edit as a range of its text and the new
text. Inputs are a text and a run of edits drawn from an alphabet heavy with what
other line models break at (U+2028, U+2029, U+0085, VT, FF, the separators U+001C to
U+001E), lone CRs, CRLFs, characters outside the BMP (two UTF-16 units) and plan
text. The client's text is worked out here from the specification, character by
character; the server's is the buffer of the language server's workspace
(``plancc.lsp.server.PlanWorkspace``, the one `initialize` installs) after pygls
applies each change; after every edit the two must be equal.

tests/test_fuzz_edits.py runs it briefly in `make test` and longer among the slow
tests; ``make fuzz FUZZ_TARGET=edits`` runs it for FUZZ_SECONDS.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from lsprotocol import types as T
from pygls.workspace import Workspace

from plancc.lsp.server import PlanWorkspace

URI = "file:///fuzz/plan.yaml"
ODD = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r", "\r\n", "\n"]
PLAIN = ["a", "b", " ", "#", ":", "-", "[", "]", "é", "😀", "\ufeff", "\t"]
PIECES = [*ODD, *PLAIN, "layers:\n  k:\n", "- {name: w, after: s0}\n", "# a\u2028b\n"]


class Figures:
    edits = 0


def lsp_lines(text: str) -> list[str]:
    """The client's lines, from LSP's words: each ends at CRLF, CR or LF (its break
    kept); nothing else ends a line."""
    out, line, i = [], "", 0
    while i < len(text):
        c = text[i]
        line += c
        if c == "\r" and text[i + 1 : i + 2] == "\n":
            line += "\n"
            i += 1
        if c in "\r\n":
            out.append(line)
            line = ""
        i += 1
    return [*out, line]  # the last line (empty after a final break)


def _units(s: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in s)


def position(text: str, offset: int) -> T.Position:
    """The client's position of ``offset``: its line, and UTF-16 units before it."""
    before = lsp_lines(text[:offset])
    return T.Position(len(before) - 1, _units(before[-1]))


def _offsets(text: str) -> list[int]:
    """The offsets a client can point at: not between a CR and its LF."""
    return [i for i in range(len(text) + 1) if text[i - 1 : i + 1] != "\r\n"]


@st.composite
def sessions(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, str]]]:
    """A text and a run of edits (start, end, new text) as offsets into the text each
    edit sees."""
    words = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
    text = draw(words)
    edits = []
    current = text
    for _ in range(draw(st.integers(1, 12))):
        places = _offsets(current)
        a = draw(st.sampled_from(places))
        b = draw(st.sampled_from([p for p in places if p >= a]))
        new = draw(words)
        edits.append((a, b, new))
        current = current[:a] + new + current[b:]
    return text, edits


def check(
    text: str, edits: list[tuple[int, int, str]], kind: type[Workspace] = PlanWorkspace
) -> None:
    """The edits made by the client and by the server (a workspace of ``kind``: the one
    `initialize` installs); the two texts equal after each."""
    workspace = Workspace(None)
    workspace.__class__ = kind  # as `initialize` makes it
    workspace.put_text_document(T.TextDocumentItem(URI, "yaml", 1, text))
    client = text
    for version, (a, b, new) in enumerate(edits, start=2):
        change = T.TextDocumentContentChangePartial(
            T.Range(position(client, a), position(client, b)), new
        )
        client = client[:a] + new + client[b:]
        workspace.update_text_document(T.VersionedTextDocumentIdentifier(version, URI), change)
        server = workspace.get_text_document(URI).source
        assert server == client, f"after {version - 1} edits: {server!r} != {client!r}"
        Figures.edits += 1


def run(examples: int, round_seed: int | None = None) -> None:
    """``examples`` sessions; the same ones each time unless ``round_seed`` picks others."""
    test = given(sessions())(lambda session: check(*session))
    if round_seed is not None:
        test = seed(round_seed)(test)
    settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=round_seed is None,
        suppress_health_check=list(HealthCheck),
    )(test)()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    start, rounds, failures = time.perf_counter(), 0, 0
    while time.perf_counter() - start < args.seconds:
        try:
            run(500, round_seed=rounds)
        except Exception as exc:  # a disagreement: printed, counted
            failures += 1
            print("".join(traceback.format_exception_only(exc)), file=sys.stderr)
        rounds += 1
    took = time.perf_counter() - start
    print(f"fuzz edits: {Figures.edits} edits in {took:.0f} s, {failures} failing")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
