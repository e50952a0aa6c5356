"""The language server on half-typed text, in-process: states of typing the Flash plan
from an empty file, character by character, go through the function the server runs on
each change (check, index, diagnostics) and through every feature, and none raises.

Every state (6,600 of them) takes minutes on a loaded 2-core machine, so `make test`
checks every 11th character (a stride prime to the plan's indentation, so cuts land at
every column class); ``PLANCC_EVERY_STATE=1`` checks every single one. A sample of the
states also goes through the real server process in test_lsp.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types as T
from pygls.workspace.position_codec import PositionCodec

from plancc.lsp import completion, hover, navigation, outline
from plancc.lsp.diagnostics import to_lsp
from plancc.lsp.server import analyse

pytestmark = pytest.mark.slow  # `make test` skips it; .ci/run runs it

ROOT = Path(__file__).parents[1]
FLASH = (ROOT / "plans" / "deepseek_v4_flash.yaml").resolve()
SHARDS = 8  # the states, split so that a failure names a small range
STRIDE = 1 if os.environ.get("PLANCC_EVERY_STATE") else 11


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_state_of_typing_the_flash_plan(shard: int) -> None:
    source = FLASH.read_text("utf-8")
    codec = PositionCodec()
    everything = T.Range(T.Position(0, 0), T.Position(10**6, 0))
    states = [*range(0, len(source), STRIDE), len(source)]
    for n in states[shard::SHARDS]:
        text = source[:n]
        state = analyse(FLASH.as_uri(), n, text, {}, codec=codec, docs_url="docs")
        shown = [d for d in to_lsp(state) if d.severity != T.DiagnosticSeverity.Hint]
        assert shown or state.result.plan is not None, n  # only a whole plan may be clean
        end = T.Position(text.count("\n"), len(text) - (text.rfind("\n") + 1))
        hover.hover(state, end)
        completion.complete(state, text, end)
        navigation.definition(state, end, {})
        navigation.references(state, end, True)
        outline.symbols(state)
        outline.inlay_hints(state, everything)


def test_validate_does_not_import_pygls() -> None:
    code = (
        "import sys\nfrom plancc.cli.app import app\n"
        "app(['validate', '-q', 'plans/deepseek_v4_flash.yaml'], standalone_mode=False)\n"
        "print('pygls' in sys.modules, 'plancc.lsp' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "False False"
