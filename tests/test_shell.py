"""The Regenerate command: every plan path comes back whole from a shell."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancc.render import shell

BASH = shutil.which("bash")


def _through_bash(word: str) -> bytes:
    """What bash makes of ``word`` pasted onto a command line."""
    assert BASH is not None
    return subprocess.run([BASH, "-c", f"printf %s {word}"], capture_output=True, check=True).stdout


@pytest.mark.parametrize(
    ("path", "quoted"),
    [
        ("../plans/x.yaml", "../plans/x.yaml"),
        ("my plans/x.yaml", "'my plans/x.yaml'"),
        ("-x.yaml", "./-x.yaml"),
        ("../caf\u00e9.yaml", "$'../caf\\xc3\\xa9.yaml'"),
        ("it's.yaml", "$'it\\'s.yaml'"),
        ('say "hi".yaml', "$'say \\x22hi\\x22.yaml'"),
        ("a\\b.yaml", "$'a\\\\b.yaml'"),
        ("bad\udcff.yaml", "$'bad\\xff.yaml'"),  # a file name that is not UTF-8
    ],
)
def test_quote(path: str, quoted: str) -> None:
    assert shell.quote(path) == quoted
    assert quoted.isascii()
    assert '"' not in quoted
    if BASH:
        expected = os.fsencode(path)
        assert _through_bash(quoted) == (b"./" + expected if path.startswith("-") else expected)


@pytest.mark.skipif(BASH is None, reason="no bash")
@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(blacklist_characters="\0", blacklist_categories=["Cs"]), min_size=1))
def test_any_path_comes_back_whole(path: str) -> None:
    quoted = shell.quote(path)
    assert quoted.isascii()
    assert all(" " <= ch <= "~" for ch in quoted)
    got = _through_bash(quoted)
    assert got == (b"./" if path.startswith("-") else b"") + path.encode()


def test_regenerate_reads_a_piped_plan_from_standard_input() -> None:
    assert shell.regenerate("../p.yaml", piped=False) == "plancc build ../p.yaml --out ."
    assert (
        shell.regenerate("../p.yaml", piped=True)
        == "plancc build - --stdin-filename ../p.yaml --out ."
    )
