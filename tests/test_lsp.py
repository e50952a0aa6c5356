"""`plancc lsp`, driven over stdio as an editor drives it (pytest-lsp starts the real
server process): diagnostics, hover, completion, navigation, rename, code actions,
outline and inlay hints on tests/data/lsp/demo.yaml and the case corpus."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as T
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient

from plancc.api import validate_paths
from plancc.check import catalog
from plancc.codes import Severity
from plancc.lsp.adapter import check_text

pytestmark = pytest.mark.asyncio(loop_scope="module")

DATA = Path(__file__).parent / "data" / "lsp"
DEMO = (DATA / "demo.yaml").resolve()
CASES = Path(__file__).parent / "cases"


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "plancc", "lsp"]),
)
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    caps = T.ClientCapabilities(
        text_document=T.TextDocumentClientCapabilities(
            publish_diagnostics=T.PublishDiagnosticsClientCapabilities(related_information=True)
        ),
        general=T.GeneralClientCapabilities(position_encodings=[T.PositionEncodingKind.Utf16]),
    )
    await lsp_client.initialize_session(T.InitializeParams(capabilities=caps))
    yield
    await lsp_client.shutdown_session()


_versions: dict[str, int] = {}


async def _published(client: LanguageClient, uri: str) -> list[T.Diagnostic]:
    for _ in range(3000):
        if uri in client.diagnostics:
            return list(client.diagnostics[uri])
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics for {uri}")


async def open_text(
    client: LanguageClient, text: str, path: Path = DEMO, language: str = "yaml"
) -> list[T.Diagnostic]:
    """Open (or replace the text of) ``path`` in the server; its diagnostics."""
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    if uri in _versions:
        _versions[uri] += 1
        client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                T.VersionedTextDocumentIdentifier(_versions[uri], uri),
                [T.TextDocumentContentChangeWholeDocument(text)],
            )
        )
    else:
        _versions[uri] = 1
        client.text_document_did_open(
            T.DidOpenTextDocumentParams(T.TextDocumentItem(uri, language, 1, text))
        )
    if language != "yaml":
        return []
    return await _published(client, uri)


def close(client: LanguageClient, path: Path) -> None:
    uri = path.as_uri()
    _versions.pop(uri, None)
    client.text_document_did_close(T.DidCloseTextDocumentParams(T.TextDocumentIdentifier(uri)))


def demo() -> str:
    return DEMO.read_text("utf-8")


def where(text: str, needle: str, offset: int = 0) -> T.Position:
    """The position of ``needle``'s first character (plus ``offset``) in ``text``."""
    i = text.index(needle) + offset
    line = text.count("\n", 0, i)
    return T.Position(line, i - (text.rfind("\n", 0, i) + 1))


def doc() -> T.TextDocumentIdentifier:
    return T.TextDocumentIdentifier(DEMO.as_uri())


def one_based(d: T.Diagnostic) -> tuple[str, int, int, int, int]:
    r = d.range
    return (
        str(d.code),
        r.start.line + 1,
        r.start.character + 1,
        r.end.line + 1,
        r.end.character + 1,
    )


def apply(text: str, edits: list[T.TextEdit]) -> str:
    lines = text.splitlines(True)

    def offset(p: T.Position) -> int:
        return sum(len(line) for line in lines[: p.line]) + p.character

    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


def codes_of(text: str) -> list[str]:
    return [d.code for d in check_text(DEMO, text, {}).diagnostics]


# -- diagnostics ---------------------------------------------------------------------------


def _utf16_to_col(line: str, units: int) -> int:
    n = 0
    for i, c in enumerate(line):
        if n >= units:
            return i
        n += 2 if ord(c) > 0xFFFF else 1
    return len(line)


@pytest.mark.slow
async def test_every_case_gets_the_diagnostics_of_validate(client: LanguageClient) -> None:
    """Code, line, column and message as `plancc validate` prints them, for the whole
    corpus (UTF-8 text, as an editor buffer is)."""
    checked = 0
    for plan in sorted(CASES.rglob("*.yaml")):
        text = plan.read_text("utf-8")
        path = plan.resolve()
        got = await open_text(client, text, path)
        close(client, path)
        lines = text.splitlines() or [""]
        shown = []
        for d in got:
            if d.severity == T.DiagnosticSeverity.Hint:
                continue
            line = lines[d.range.start.line] if d.range.start.line < len(lines) else ""
            col = _utf16_to_col(line, d.range.start.character) + 1
            col -= d.range.start.line == 0 and line.startswith("\ufeff")
            shown.append((d.code, d.range.start.line + 1, col, d.message))
        expected = [
            (d.code, d.line, d.col, d.message) for d in validate_paths([str(plan)]).diagnostics
        ]
        assert shown == expected, plan
        checked += 1
    assert checked > 100


async def test_diagnostics_cover_the_node_at_fault(client: LanguageClient) -> None:
    got = {d.code: d for d in await open_text(client, demo())}
    assert sorted(one_based(d) for d in got.values()) == [
        ("PC102", 32, 19, 32, 23),  # wo_b
        ("PC103", 32, 18, 32, 30),  # [wo_b, wo_a]
        ("PC104", 31, 16, 31, 22),  # q_proj
    ]
    pc104 = got["PC104"]
    assert pc104.severity == T.DiagnosticSeverity.Warning
    assert pc104.source == "plancc"
    assert pc104.code_description is not None
    assert pc104.code_description.href.endswith("docs/rules.md#pc104")
    assert pc104.related_information is not None
    assert pc104.related_information[0].message == (
        "hint: anchor at 'k_proj' (task k_tid): the last weight stream after which the warm "
        "still lands"
    )


async def test_errors_and_allowed_warnings(client: LanguageClient) -> None:
    text = demo().replace(
        "tensors: [wo_b, wo_a]",
        "tensors: [wo_b, wo_a]\n        allow: [PC104]\n        reason: measured",
    )
    text = text.replace("dtype: int8}", "dtype: int9}")
    got = {d.code: d for d in await open_text(client, text)}
    assert got["PC023"].severity == T.DiagnosticSeverity.Error
    assert one_based(got["PC023"])[1:] == (17, 41, 17, 45)
    assert got["PC104"].severity == T.DiagnosticSeverity.Hint
    assert got["PC104"].message.endswith("(allowed: measured)")


async def test_yaml_error_covers_the_word(client: LanguageClient) -> None:
    got = await open_text(client, "plancc: 1\nmodel: [b, @c]\n")
    assert [one_based(d) for d in got] == [("PC001", 2, 12, 2, 15)]  # @c]


async def test_an_edited_config_rechecks_the_plans_using_it(client: LanguageClient) -> None:
    config = (DATA / "demo.config.json").resolve()
    assert "PC005" not in [d.code for d in await open_text(client, demo())]
    client.diagnostics.pop(DEMO.as_uri(), None)
    await open_text(client, '{"hidden_size": "4096"}', config, language="json")
    got = await _published(client, DEMO.as_uri())
    assert [d.code for d in got if d.code == "PC005"] == ["PC005"]
    client.diagnostics.pop(DEMO.as_uri(), None)
    close(client, config)  # unsaved text gone: the file on disk counts again
    got = await _published(client, DEMO.as_uri())
    assert "PC005" not in [d.code for d in got]


# -- hover ---------------------------------------------------------------------------------


async def _hover(client: LanguageClient, text: str, needle: str, offset: int = 0) -> str:
    await open_text(client, text)
    h = await client.text_document_hover_async(
        T.HoverParams(text_document=doc(), position=where(text, needle, offset))
    )
    assert h is not None
    assert isinstance(h.contents, T.MarkupContent)
    return h.contents.value


async def test_hover_tensor_dim_warm_and_rule(client: LanguageClient) -> None:
    text = demo()
    assert await _hover(client, text, "wo_a: {", 1) == (
        "tensor `wo_a`: [8, 1024, 1024] bf16\n\n"
        "bytes: 16,777,216 B = 16.8 MB = 16.0 MiB = 0.08× L2\n\n"
        "read by: attn.o_a"
    )
    assert await _hover(client, text, "O_IN:") == "dim `O_IN` = 1,024"
    assert await _hover(client, text, "hidden_size", 2) == "config key `hidden_size` = 4,096"
    warm = await _hover(client, text, "warm_o", 1)
    assert "alive in: k_proj, core, o_a, o_b" in warm
    assert "bytes: 50,331,648 B = 50.3 MB = 48.0 MiB = 0.25× L2" in warm
    assert "estimated landing: first consumer 'o_a'; add `duration_us`" in warm
    assert "- warning PC104: anchor 'q_proj' is early: 'k_proj' streams 1.0 MB" in warm
    assert await _hover(client, text, "k_proj, task") == (
        "stage `k_proj` (#3 of `attn`)\n\nreads: wk\n\nwarms alive: warm_o"
    )
    assert await _hover(client, text, "attn:") == "layer kind `attn`: 6 stages, 1 warm"
    timed = text.replace("task: k_tid,", "task: k_tid, duration_us: 10,").replace(
        "{name: core}", "{name: core, duration_us: 0.5}"
    )
    assert "estimated landing: 5.9 % of 50,331,648 B in the 10.5 µs before 'o_a' at 285 GB/s" in (
        await _hover(client, timed, "warm_o", 1)
    )
    allowed = text.replace(
        "tensors: [wo_b", "allow: [PC102]\n        reason: r\n        tensors: [wo_b"
    )
    assert (await _hover(client, allowed, "PC102", 1)).startswith("**PC102** issue-order (warning)")


async def test_hover_on_a_graph_plan_uses_its_schedule(client: LanguageClient) -> None:
    """`live` is in steps: k_proj (step 1) runs beside the anchor q_proj, and o_b (step 4,
    the sixth stage) holds the warm; a stage slice of `live` would say the opposite."""
    text = demo()
    for old, new in [
        ("{name: norm, task: norm_tid}", "{name: norm, task: norm_tid, deps: []}"),
        ("{name: q_proj, task: q_tid,", "{name: q_proj, task: q_tid, deps: [norm],"),
        ("{name: k_proj, task: k_tid,", "{name: k_proj, task: k_tid, deps: [norm],"),
        ("{name: core}", "{name: core, deps: [q_proj, k_proj]}"),
    ]:
        assert old in text
        text = text.replace(old, new)
    assert "alive in: core, o_a, o_b\n" in await _hover(client, text, "warm_o", 1)
    assert await _hover(client, text, "k_proj, task") == (
        "stage `k_proj` (#3 of `attn`)\n\nreads: wk\n\nwarms alive: none"
    )


RULE_CASES = Path(__file__).parent / "cases" / "rules"


async def test_hover_says_the_rules_landing_on_a_graph(client: LanguageClient) -> None:
    """s1 and s2 run beside each other, 10 µs each: one step of 10 µs before s3, as PC107
    says (16.9 %); a sum over the list order said 33.9 % in 20 µs."""
    text = (RULE_CASES / "pc107_graph_window.yaml").read_text("utf-8")
    got = await open_text(client, text)
    assert [str(d.code) for d in got] == ["PC107"]
    assert "an estimated 16.9 % of its 16.8 MB" in got[0].message
    assert "estimated landing: 16.9 % of 16,777,216 B in the 10 µs before 's3' at 285 GB/s" in (
        await _hover(client, text, "wm,", 0)
    )


# -- completion ----------------------------------------------------------------------------


async def _complete(client: LanguageClient, text: str, needle: str) -> list[str]:
    """Labels offered at the end of ``needle`` in ``text`` (which need not parse)."""
    await open_text(client, demo())  # the names come from the last text that parsed
    await open_text(client, text)
    at = where(text, needle, len(needle))
    got = await client.text_document_completion_async(
        T.CompletionParams(text_document=doc(), position=at)
    )
    assert isinstance(got, T.CompletionList)
    return [i.label for i in got.items]


async def test_completion_by_place(client: LanguageClient) -> None:
    text = demo()
    tensors = ["wq", "wk", "wo_a", "wo_b", "wo_s"]
    assert await _complete(client, text.replace("reads: [wq]", "reads: [w"), "reads: [w") == tensors
    half = text.replace("tensors: [wo_b, wo_a]", "tensors: [wo_b, ")
    assert await _complete(client, half, "tensors: [wo_b, ") == tensors
    after = text.replace("after: q_proj", "after: ")
    assert await _complete(client, after, "after: ") == [
        "norm",
        "q_proj",
        "k_proj",
        "core",
        "o_a",
        "o_b",
    ]
    dtype = await _complete(client, text.replace("dtype: int8}", "dtype: "), "dtype: ")
    assert "bf16" in dtype
    assert "fp8e4m3fn" in dtype
    assert await _complete(client, text, "platform: ") == ["a2a3", "a2a3sim", "a5", "a5sim"]
    dims = await _complete(client, text.replace("[D, HD]", "[D, H"), "[D, H")
    assert dims == ["D", "H", "HD", "O_G", "O_IN", "hidden_size", "num_layers"]
    expr = await _complete(client, text.replace("H * HD // O_G", "H * "), "O_IN: H * ")
    assert "HD" in expr
    assert "hidden_size" in expr
    allow = await _complete(client, text + "        allow: [", "allow: [")
    assert "PC102" in allow  # an error there would be PC004
    assert "PC030" not in allow
    assert "PC004" not in allow  # a warning, but one that is never silenced
    assert "PC006" in allow
    warnings = {c.id for c in catalog() if c.severity is Severity.WARNING}
    assert set(allow) == warnings - {"PC004"}
    forward = await _complete(client, text + "forward:\n  - ", "forward:\n  - ")
    assert forward == ["attn"]
    kinds = text + "forward:\n  from_config: ratios\n  kinds: {0: "
    assert await _complete(client, kinds, "kinds: {0: ") == ["attn"]
    assert await _complete(client, text + "forward:\n  from_config: ", "from_config: ") == [
        "ratios"
    ]
    ignore = await _complete(client, text + "lint:\n  ignore: [PC1", "ignore: [PC1")
    assert "PC104" in ignore


async def test_completion_on_a_document_never_opened_is_null(client: LanguageClient) -> None:
    """Null, as hover is (it answered an internal error with a traceback, or completed
    from the file on disk, which the editor never showed the server)."""
    for path in (DATA / "absent.yaml", CASES.parent / "data" / "lsp" / "demo.config.json"):
        got = await client.text_document_completion_async(
            T.CompletionParams(
                text_document=T.TextDocumentIdentifier(path.resolve().as_uri()),
                position=T.Position(0, 0),
            )
        )
        assert got is None, path


# A stage's `deps` names stages of its layer kind listed before it. Until the schema has
# the key, the plan carries PC002 for it; completion, hover and navigation read the text.
DEPS = demo().replace("- {name: core}", "- {name: core, deps: [q_proj, k_proj]}")


async def test_completion_of_deps(client: LanguageClient) -> None:
    before_core = ["norm", "q_proj", "k_proj"]
    flow = DEPS.replace("deps: [q_proj, k_proj]", "deps: [q_proj, ")
    assert await _complete(client, flow, "deps: [q_proj, ") == before_core
    first = DEPS.replace("- {name: core, deps: [q_proj, k_proj]}", "- {deps: [, name: core}")
    assert await _complete(client, first, "deps: [") == before_core  # `name` after it
    block = DEPS.replace(
        "      - {name: o_a, reads: [wo_a], group: o}",
        "      - name: o_a\n        reads: [wo_a]\n        deps:\n          - ",
    )
    assert await _complete(client, block, "deps:\n          - ") == [*before_core, "core"]
    new = DEPS.replace("    warms:", "      - {name: o_c, deps: [\n    warms:")
    assert await _complete(client, new, "o_c, deps: [") == [*before_core, "core", "o_a", "o_b"]


async def test_hover_and_navigation_on_deps(client: LanguageClient) -> None:
    assert await _hover(client, DEPS, "deps: [q_proj", 7) == (
        "stage `q_proj` (#2 of `attn`)\n\nreads: wq\n\nwarms alive: none"
    )
    (stage,) = await _definition(client, DEPS, "k_proj]}", 1)
    assert stage.range.start == where(DEPS, "k_proj, task")
    refs = await client.text_document_references_async(
        T.ReferenceParams(
            text_document=doc(),
            position=where(DEPS, "q_proj, task"),
            context=T.ReferenceContext(include_declaration=False),
        )
    )
    assert refs is not None
    assert sorted((r.range.start.line + 1, r.range.start.character + 1) for r in refs) == [
        (26, 29),  # deps: [q_proj
        (31, 16),  # after: q_proj
    ]
    edit = await client.text_document_rename_async(
        T.RenameParams(text_document=doc(), position=where(DEPS, "q_proj, task"), new_name="q")
    )
    assert edit is not None
    assert edit.changes is not None
    renamed = apply(DEPS, edit.changes[DEMO.as_uri()])
    assert "- {name: core, deps: [q, k_proj]}" in renamed
    assert "after: q\n" in renamed


# -- navigation ----------------------------------------------------------------------------


async def _definition(
    client: LanguageClient, text: str, needle: str, offset: int
) -> list[T.Location]:
    await open_text(client, text)
    got = await client.text_document_definition_async(
        T.DefinitionParams(text_document=doc(), position=where(text, needle, offset))
    )
    assert isinstance(got, list)
    return [g for g in got if isinstance(g, T.Location)]


async def test_definition(client: LanguageClient) -> None:
    text = demo()
    (dim,) = await _definition(client, text, "// O_G", 4)
    assert (dim.uri, dim.range.start) == (DEMO.as_uri(), where(text, "O_G: 8"))
    (tensor,) = await _definition(client, text, "[wo_b, wo_a]", 8)
    assert tensor.range.start == where(text, "wo_a: {")
    (stage,) = await _definition(client, text, "after: q_proj", 8)
    assert stage.range.start == where(text, "q_proj, task")
    (key,) = await _definition(client, text, "D: hidden_size", 4)
    config = (DATA / "demo.config.json").resolve()
    assert key.uri == config.as_uri()
    assert (key.range.start, key.range.end) == (T.Position(0, 1), T.Position(0, 14))


FORMS = """\
params:
  CTX: {default: 2048, range: [1, 4096], source: ctx_len}
"""


def forms() -> str:
    """The demo with a param, and its warm guarded, a prefix and a cross-layer warm."""
    text = demo().replace("tensors:\n", FORMS + "\ntensors:\n", 1)
    text = text.replace(
        "        tensors: [wo_b, wo_a]",
        "        guard: CTX <= 2272\n        tensors:\n          - wo_b\n"
        "          - {tensor: wo_a, rows: [0, O_G // 2]}\n"
        "      - {name: next_q, after: k_proj, next_layer: true, tensors: [wq]}",
    )
    return text


async def test_the_new_keys_hover_complete_and_navigate(client: LanguageClient) -> None:
    """Issue 43: a guard's param and bound, a prefix's rows, `next_layer`."""
    text = forms()
    assert [d.code for d in await open_text(client, text)] == ["PC104", "PC103", "PC102"]
    warm = await _hover(client, text, "warm_o", 1)
    assert "prefix: `wo_a` rows [0, 4) of 8, 8,388,608 B = 8.4 MB = 8.0 MiB = 0.04× L2" in warm
    assert "guard: issued only when `CTX <= 2272` (run-time `ctx_len`)" in warm
    cross = await _hover(client, text, "next_q", 1)
    assert "next layer: warms the tensors of the layer after this one (`attn`)" in cross
    assert "alive in the next layer: norm, q_proj of `attn`" in cross
    assert await _hover(client, text, "CTX <=", 1) == (
        "param `CTX` = 2,048, range 1 … 4,096\n\nrun-time value in the model code: `ctx_len`"
    )
    (param,) = await _definition(client, text, "CTX <=", 1)
    assert param.range.start == where(text, "CTX: {")
    (dim,) = await _definition(client, text, "O_G // 2", 1)
    assert dim.range.start == where(text, "O_G: 8")
    guard = text.replace("guard: CTX <= 2272", "guard: C")
    assert "CTX" in await _complete(client, guard, "guard: C")
    rows = text.replace("rows: [0, O_G // 2]", "rows: [0, O")
    assert {"O_G", "O_IN"} <= set(await _complete(client, rows, "rows: [0, O"))
    cross_key = text.replace("next_layer: true", "next_layer: ")
    assert await _complete(client, cross_key, "next_layer: ") == ["true", "false"]
    engine = text.replace(
        "{name: k_proj, task: k_tid,", "{name: k_proj, collective: , task: k_tid,"
    )
    assert await _complete(client, engine, "collective: ") == ["mte", "sdma"]


async def test_references_and_rename(client: LanguageClient) -> None:
    text = demo()
    await open_text(client, text)
    at = where(text, "wo_a: {")
    refs = await client.text_document_references_async(
        T.ReferenceParams(
            text_document=doc(),
            position=at,
            context=T.ReferenceContext(include_declaration=True),
        )
    )
    assert refs is not None
    assert sorted(r.range.start.line + 1 for r in refs) == [16, 27, 32]
    for needle, offset, new in (
        ("wo_a: {", 0, "w_out_a"),
        ("O_G: 8", 0, "GROUPS"),
        ("q_proj, task", 0, "q_rope"),
        ("warm_o", 0, "warm_out"),
    ):
        old = text[text.index(needle) + offset :].split(":")[0].split(",")[0]
        edit = await client.text_document_rename_async(
            T.RenameParams(text_document=doc(), position=where(text, needle, offset), new_name=new)
        )
        assert edit is not None
        assert edit.changes is not None
        renamed = apply(text, edit.changes[DEMO.as_uri()])
        assert old not in renamed.replace(f"{old}_", "#"), old
        assert codes_of(renamed) == codes_of(text)


async def test_rename_to_a_name_that_cannot_be_is_refused(client: LanguageClient) -> None:
    """InvalidParams with the reason, and no traceback (it was an internal error)."""
    text = demo()
    await open_text(client, text)
    for needle, new, why in (
        ("wo_a: {", "lambda", "cannot rename tensor 'wo_a': 'lambda' is a Python keyword"),
        (
            "wo_a: {",
            "2x",
            "cannot rename tensor 'wo_a': '2x' is not an identifier (letters, "
            "digits and '_', starting with a letter)",
        ),
        ("wo_a: {", "wo_b", "cannot rename tensor 'wo_a': 'wo_b' is another tensor"),
        (
            "q_proj, task",
            "k_proj",
            "cannot rename stage 'q_proj': 'k_proj' is another stage of attn",
        ),
        (
            "warm_o",
            "pl",
            "cannot rename warm 'warm_o': 'pl' is reserved by the generated "
            "module (pl, after, warm_ctx, *_flat)",
        ),
    ):
        with pytest.raises(JsonRpcInvalidParams) as refused:
            await client.text_document_rename_async(
                T.RenameParams(text_document=doc(), position=where(text, needle), new_name=new)
            )
        assert (refused.value.code, refused.value.message) == (-32602, why)
        assert refused.value.data is None
    assert client.messages == []  # nothing shown to the user beside the refusal


# -- code actions --------------------------------------------------------------------------


async def _fixes(client: LanguageClient, text: str, code: str) -> list[T.CodeAction]:
    got = [d for d in await open_text(client, text) if d.code == code]
    assert got, code
    actions = await client.text_document_code_action_async(
        T.CodeActionParams(
            text_document=doc(),
            range=got[0].range,
            context=T.CodeActionContext(diagnostics=got[:1]),
        )
    )
    assert actions is not None
    return [a for a in actions if isinstance(a, T.CodeAction)]


async def _fixed(client: LanguageClient, text: str, code: str, index: int = 0) -> tuple[str, str]:
    action = (await _fixes(client, text, code))[index]
    assert action.edit is not None
    assert action.edit.changes is not None
    return action.title, apply(text, action.edit.changes[DEMO.as_uri()])


async def test_code_actions(client: LanguageClient) -> None:
    text = demo()
    title, fixed = await _fixed(client, text, "PC102")
    assert title == "issue in consumer order: [wo_a, wo_b]"
    assert "tensors: [wo_a, wo_b]" in fixed
    assert "PC102" not in codes_of(fixed)
    title, fixed = await _fixed(client, text, "PC103")
    assert title == "add wo_s to the warm, in consumer order"
    assert "tensors: [wo_a, wo_b, wo_s]" in fixed  # appended, then the list in consumer order
    assert "PC103" not in codes_of(fixed)
    title, fixed = await _fixed(client, text, "PC104")
    assert title == "anchor at 'k_proj'"
    assert "after: k_proj" in fixed
    assert "PC104" not in codes_of(fixed)
    typo = text.replace("reads: [wk]", "reads: [wkk]")
    title, fixed = await _fixed(client, typo, "PC010")
    assert (title, fixed) == ("replace 'wkk' with 'wk'", text)
    title, fixed = await _fixed(client, text, "PC104", 1)
    assert title == "allow PC104 on warm 'warm_o' (fill in the reason)"
    assert (
        fixed
        == text
        + '        allow: [PC104]\n        reason: "TODO: why PC104 is acceptable for this warm"\n'
    )
    assert "PC104" not in codes_of(fixed)
    bad = text.replace(
        "tensors: [wo_b", "allow: [PC030]\n        reason: r\n        tensors: [wo_b"
    )
    fixes = await _fixes(client, bad, "PC004")
    assert [a.kind for a in fixes] == ["source.fixAll.plancc"]  # a bad silence is never silenced


async def test_the_reorder_fix_on_a_graph_plan(client: LanguageClient) -> None:
    """s3 (right after s0, beside s1) reads b, s2 (after s1) reads a: consumer order is
    [b, a], as PC102 says; the editor offers that reorder, not only an `allow`."""
    text = (RULE_CASES / "pc102_graph_consumer_order.yaml").read_text("utf-8")
    actions = await _fixes(client, text, "PC102")
    assert [a.title for a in actions][:2] == [
        "issue in consumer order: [b, a]",
        "allow PC102 on warm 'w' (fill in the reason)",
    ]
    assert actions[0].is_preferred
    _title, fixed = await _fixed(client, text, "PC102")
    assert "tensors: [b, a]" in fixed
    assert codes_of(fixed) == []


async def test_fix_all_applies_every_safe_fix(client: LanguageClient) -> None:
    text = (RULE_CASES / "pc102_graph_consumer_order.yaml").read_text("utf-8")
    text = text.replace("allow: [PC107]", "allow: [PC107, PC105, PC103]")
    actions = await _fixes(client, text, "PC102")
    whole = [a for a in actions if a.kind == "source.fixAll.plancc"]
    assert [a.title for a in whole] == ["fix all: 3 safe fixes (plancc)"]
    assert whole[0].edit is not None
    assert whole[0].edit.changes is not None
    fixed = apply(text, whole[0].edit.changes[DEMO.as_uri()])
    assert "tensors: [b, a], allow: [PC107], reason: s3 reads b at once}" in fixed
    assert codes_of(fixed) == []


async def test_code_actions_on_block_lists(client: LanguageClient) -> None:
    text = demo().replace("tensors: [wo_b, wo_a]", "tensors:\n          - wo_b\n          - wo_a")
    _, fixed = await _fixed(client, text, "PC103")
    assert fixed.endswith("          - wo_a\n          - wo_b\n          - wo_s\n")
    _, fixed = await _fixed(client, text, "PC102")
    assert fixed.endswith("          - wo_a\n          - wo_b\n")
    flow = demo().replace(
        "- name: warm_o\n        after: q_proj\n        tensors: [wo_b, wo_a]",
        "- {name: warm_o, after: q_proj, tensors: [wo_b, wo_a]}",
    )
    _, fixed = await _fixed(client, flow, "PC104", 1)
    assert 'tensors: [wo_b, wo_a], allow: [PC104], reason: "TODO: ' in fixed
    assert "PC104" not in codes_of(fixed)


async def test_edits_and_fixes_after_a_unicode_line_separator(client: LanguageClient) -> None:
    """U+2028, U+0085 and U+2029 in a comment are characters, not line breaks, as LSP
    counts lines: an incremental change after them lands where the client made it, the
    diagnostic is at the client's line, and its quick fix edits the client's text (the
    server split lines as Python does: a fix turned `name:` into `nawo_bwo_ame:`)."""
    from fuzz_edits import position  # the client's positions, from LSP's words

    from tests.fix_sweep import apply_lsp

    text = "# the\u2028demo\x85plan\u2029\n" + demo()
    await open_text(client, text)
    uri = DEMO.as_uri()
    at = text.index("reads: [wk]") + len("reads: [wk")
    client.diagnostics.pop(uri, None)
    _versions[uri] += 1
    change = T.TextDocumentContentChangePartial(
        T.Range(position(text, at), position(text, at)), "k"
    )
    client.text_document_did_change(
        T.DidChangeTextDocumentParams(
            T.VersionedTextDocumentIdentifier(_versions[uri], uri), [change]
        )
    )
    typo = text[:at] + "k" + text[at:]
    (got,) = [d for d in await _published(client, uri) if d.code == "PC010"]
    assert got.range.start == position(typo, at - 2)
    actions = await client.text_document_code_action_async(
        T.CodeActionParams(doc(), got.range, T.CodeActionContext(diagnostics=[got]))
    )
    assert actions is not None
    (fix,) = [
        a for a in actions if isinstance(a, T.CodeAction) and a.title == "replace 'wkk' with 'wk'"
    ]
    assert fix.edit is not None
    assert fix.edit.changes is not None
    assert apply_lsp(typo, fix.edit.changes[uri]) == text


# -- outline and inlay hints ---------------------------------------------------------------


async def test_symbols_and_inlay_hints(client: LanguageClient) -> None:
    text = demo()
    await open_text(client, text)
    symbols = await client.text_document_document_symbol_async(
        T.DocumentSymbolParams(text_document=doc())
    )
    assert symbols is not None

    def tree(items: list[T.DocumentSymbol]) -> list[object]:
        return [(s.name, tree(s.children or [])) if s.children else s.name for s in items]

    assert tree([s for s in symbols if isinstance(s, T.DocumentSymbol)]) == [
        ("dims", ["D", "H", "HD", "O_G", "O_IN"]),
        ("tensors", ["wq", "wk", "wo_a", "wo_b", "wo_s"]),
        ("layers", [("attn", ["norm", "q_proj", "k_proj", "core", "o_a", "o_b", "warm_o"])]),
    ]
    whole = T.Range(T.Position(0, 0), T.Position(100, 0))
    hints = await client.text_document_inlay_hint_async(
        T.InlayHintParams(text_document=doc(), range=whole)
    )
    assert hints is not None
    assert [(h.position.line + 1, h.label) for h in hints] == [
        (14, "33.6 MB"),
        (15, "1.0 MB"),
        (16, "16.8 MB"),
        (17, "33.6 MB"),
        (18, "8.4 MB"),
    ]


# -- robustness and cost -------------------------------------------------------------------


@pytest.mark.slow
async def test_typing_the_flash_plan_through_the_server(client: LanguageClient) -> None:
    """A sample of the states of typing the Flash plan (every 61st character and the
    end), each through the server: every state gets diagnostics, no error is logged.
    Every single state goes through the same check in-process: test_lsp_typing.py."""
    flash = (Path(__file__).parents[1] / "plans" / "deepseek_v4_flash.yaml").resolve()
    source = flash.read_text("utf-8")
    states = [*range(0, len(source), 61), len(source)]
    for n in states:
        got = await open_text(client, source[:n], flash)
        # Only a text that is a whole plan may be clean (a prefix can be one).
        assert got or check_text(flash, source[:n], {}).plan is not None, n
    # Clean but for the source checks (PC2xx): they depend on the pypto-lib checkout
    # beside this one (none: PC200; upstream main: its drift; docs/sources.md).
    shown = [d for d in got if d.severity != T.DiagnosticSeverity.Hint]
    assert [d for d in shown if not str(d.code).startswith("PC2")] == []
    close(client, flash)
    errors = [m for m in client.log_messages if m.type == T.MessageType.Error]
    assert errors == []
    assert client.messages == []


async def test_a_burst_of_changes_is_checked_together(client: LanguageClient) -> None:
    """Ten changes sent at once: those that come during a check are checked together
    after it, so fewer than ten are published (two or three, as the messages are read
    during the first check), in order, the newest last."""
    text = demo()
    await open_text(client, text)
    uri = DEMO.as_uri()
    features = client.protocol.fm.features
    stored = features[T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]
    published: list[int | None] = []

    def counting(params: T.PublishDiagnosticsParams) -> None:
        published.append(params.version)
        stored(params)

    features[T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = counting
    try:
        client.diagnostics.pop(uri, None)
        for n in range(10):
            _versions[uri] += 1
            last = text.replace("dtype: int8}", "dtype: int9}") if n == 9 else f"{text}# {n}\n"
            client.text_document_did_change(
                T.DidChangeTextDocumentParams(
                    T.VersionedTextDocumentIdentifier(_versions[uri], uri),
                    [T.TextDocumentContentChangeWholeDocument(last)],
                )
            )
        for _ in range(3000):
            if _versions[uri] in published:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)  # anything published late would come now
    finally:
        features[T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = stored
    assert published[-1] == _versions[uri]
    assert published == sorted(set(published))
    assert len(published) < 10
    assert "PC023" in [d.code for d in client.diagnostics[uri]]


async def test_a_watched_config_change_rechecks(client: LanguageClient, tmp_path: Path) -> None:
    config = tmp_path / "demo.config.json"
    config.write_text('{"hidden_size": 4096, "num_layers": 4}', "utf-8")
    plan = tmp_path / "plan.yaml"
    assert "PC005" not in [d.code for d in await open_text(client, demo(), plan)]
    config.write_text('{"hidden_size": true}', "utf-8")
    client.diagnostics.pop(plan.as_uri(), None)
    change = T.FileEvent(uri=config.as_uri(), type=T.FileChangeType.Changed)
    client.workspace_did_change_watched_files(T.DidChangeWatchedFilesParams(changes=[change]))
    assert "PC005" in [d.code for d in await _published(client, plan.as_uri())]
    close(client, plan)


async def test_fix_all_removes_a_whole_stale_allow_once(client: LanguageClient) -> None:
    text = (RULE_CASES / "pc102_graph_consumer_order.yaml").read_text("utf-8")
    text = text.replace("allow: [PC107]", "allow: [PC105, PC103]")
    actions = await _fixes(client, text, "PC102")
    (whole,) = [a for a in actions if a.kind == "source.fixAll.plancc"]
    assert whole.edit is not None
    assert whole.edit.changes is not None
    fixed = apply(text, whole.edit.changes[DEMO.as_uri()])
    assert "{name: w, after: s0, tensors: [b, a]}" in fixed
    assert codes_of(fixed) == ["PC107"]  # no fix: s3 runs right after the first stage
