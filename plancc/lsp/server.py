"""The server: documents in, diagnostics out, and requests routed to the feature modules.

Checks run in one worker thread, so that the event loop keeps reading the
client's messages while a plan is checked. Changes are debounced on both
edges: a change after a quiet moment (none in the last ``DEBOUNCE_S``) is
checked at once, so an edit's diagnostics cost one check and no wait; the
changes of a burst (typing) are checked together once none has come for
``DEBOUNCE_S``. The newest text wins: a result for a text already replaced is
not published, its newer text is checked instead.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.workspace.position_codec import PositionCodec

from plancc import __version__
from plancc.lsp import actions, completion, hover, navigation, outline
from plancc.lsp.adapter import check_text
from plancc.lsp.diagnostics import default_docs_url, path_of, to_lsp
from plancc.lsp.index import Text
from plancc.lsp.state import PlanState

DEBOUNCE_S = 0.05  # a pause between keystrokes shorter than this is one burst
_PLAN_SUFFIXES = (".yaml", ".yml")


class PlanServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("plancc", __version__)
        self.plans: dict[str, PlanState] = {}  # uri -> the latest checked state
        self.good: dict[str, PlanState] = {}  # uri -> the latest state that parsed
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.dirty: set[str] = set()
        self.changed_at: dict[str, float] = {}  # uri -> time.monotonic() of its last change
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="plancc-check")
        self.docs_url = default_docs_url()

    # -- checking ------------------------------------------------------------------------

    def schedule(self, uri: str) -> None:
        now = time.monotonic()
        quiet = now - self.changed_at.get(uri, -math.inf) > DEBOUNCE_S
        self.changed_at[uri] = now
        self.dirty.add(uri)
        if uri not in self.tasks:
            self.tasks[uri] = asyncio.ensure_future(self._check_loop(uri, leading=quiet))

    async def _settle(self, uri: str) -> None:
        """Return once no change to ``uri`` has come for DEBOUNCE_S."""
        while (wait := self.changed_at[uri] + DEBOUNCE_S - time.monotonic()) > 0:
            await asyncio.sleep(wait)

    async def _check_loop(self, uri: str, *, leading: bool) -> None:
        try:
            if not leading:
                await self._settle(uri)
            while uri in self.dirty:
                self.dirty.discard(uri)
                doc = self.workspace.text_documents.get(uri)
                if doc is None:  # closed meanwhile
                    return
                args = (uri, doc.version, doc.source, self._unsaved())
                loop = asyncio.get_running_loop()
                state = await loop.run_in_executor(self.checker, self._analyse, *args)
                if isinstance(state, str):
                    self.log(lsp.MessageType.Error, state)
                    continue
                if uri in self.dirty:  # the text changed during the check: check the newest
                    await self._settle(uri)
                    continue
                self.plans[uri] = state
                if state.result.doc is not None:  # it parsed: completion's names come from it
                    self.good[uri] = state
                self.text_document_publish_diagnostics(
                    lsp.PublishDiagnosticsParams(uri, to_lsp(state), version=state.version)
                )
        finally:
            self.tasks.pop(uri, None)

    def _analyse(
        self, uri: str, version: int | None, source: str, unsaved: dict[Path, str]
    ) -> PlanState | str:
        """The state of one text, or the report of an internal error (logged by the loop)."""
        try:
            codec = self.workspace.position_codec
            return analyse(uri, version, source, unsaved, codec=codec, docs_url=self.docs_url)
        except Exception:  # a bug, never the plan's fault: say so, keep serving
            return f"plancc: internal error\n{traceback.format_exc()}"

    def _unsaved(self) -> dict[Path, str]:
        """The text of every open non-plan buffer (a config being edited), by real path."""
        out = {}
        for uri, doc in self.workspace.text_documents.items():
            path = None if is_plan(uri) else navigation.real_path(path_of(uri))
            if path is not None:
                out[path] = doc.source
        return out

    def recheck_users_of(self, uri: str) -> None:
        """Re-check every open plan whose `config` is the file at ``uri``."""
        changed = navigation.real_path(path_of(uri))
        for plan_uri, state in list(self.plans.items()):
            if changed is not None and navigation.config_path(state) == changed:
                self.schedule(plan_uri)

    def log(self, kind: lsp.MessageType, message: str) -> None:
        self.window_log_message(lsp.LogMessageParams(kind, message))

    def state(self, uri: str) -> PlanState | None:
        return self.plans.get(uri)


def analyse(
    uri: str,
    version: int | None,
    source: str,
    unsaved: dict[Path, str],
    *,
    codec: PositionCodec,
    docs_url: str,
) -> PlanState:
    """Check one buffer's text: what every feature reads."""
    path = path_of(uri)
    result = check_text(path, source, unsaved)
    text = Text(source)
    return PlanState(uri, path, version, text, result, codec, docs_url)


def is_plan(uri: str) -> bool:
    return uri.lower().endswith(_PLAN_SUFFIXES)


def create() -> PlanServer:
    server = PlanServer()
    _wire_documents(server)
    _wire_features(server)
    return server


def _wire_documents(server: PlanServer) -> None:  # noqa: C901 (the protocol's document handlers, each a short function registered here)
    @server.feature(lsp.INITIALIZE)
    def initialize(ls: PlanServer, params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("docsUrl"), str):
            ls.docs_url = options["docsUrl"]

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: PlanServer, params: lsp.InitializedParams) -> None:
        caps = ls.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps else None
        if watched is not None and watched.dynamic_registration:
            watch = lsp.FileSystemWatcher(glob_pattern="**/*.json")
            options = lsp.DidChangeWatchedFilesRegistrationOptions(watchers=[watch])
            reg = lsp.Registration("plancc-config", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, options)
            ls.client_register_capability(lsp.RegistrationParams([reg]))

    def changed(ls: PlanServer, uri: str) -> None:
        if is_plan(uri):
            ls.schedule(uri)
        else:
            ls.recheck_users_of(uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PlanServer, params: lsp.DidOpenTextDocumentParams) -> None:
        changed(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PlanServer, params: lsp.DidChangeTextDocumentParams) -> None:
        changed(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: PlanServer, params: lsp.DidSaveTextDocumentParams) -> None:
        changed(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PlanServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if is_plan(uri):
            ls.plans.pop(uri, None)
            ls.good.pop(uri, None)
            ls.dirty.discard(uri)
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))
        else:  # its unsaved text is gone: plans read the file again
            ls.recheck_users_of(uri)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: PlanServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            changed(ls, change.uri)


def _wire_features(server: PlanServer) -> None:  # noqa: C901 (the protocol's feature handlers, each a short function registered here)
    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: PlanServer, params: lsp.HoverParams) -> lsp.Hover | None:
        state = ls.state(params.text_document.uri)
        return hover.hover(state, params.position) if state else None

    triggers = [" ", "[", ",", "-", "*", "+", "(", "/"]

    @server.feature(
        lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=triggers)
    )
    def on_completion(ls: PlanServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        document = ls.workspace.get_text_document(params.text_document.uri)
        at = document.position_from_client_units(params.position)  # code points
        where = lsp.Position(at.line, at.character)
        return completion.complete(ls.good.get(document.uri), document.source, where)

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def on_definition(ls: PlanServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
        state = ls.state(params.text_document.uri)
        return navigation.definition(state, params.position, ls._unsaved()) if state else []

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    def on_references(ls: PlanServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
        state = ls.state(params.text_document.uri)
        if state is None:
            return []
        return navigation.references(state, params.position, params.context.include_declaration)

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    def on_prepare_rename(ls: PlanServer, params: lsp.PrepareRenameParams) -> Any:
        state = ls.state(params.text_document.uri)
        return navigation.prepare_rename(state, params.position) if state else None

    @server.feature(lsp.TEXT_DOCUMENT_RENAME)
    def on_rename(ls: PlanServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        state = ls.state(params.text_document.uri)
        return navigation.rename(state, params.position, params.new_name) if state else None

    kinds = [lsp.CodeActionKind.QuickFix]

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=kinds))
    def on_code_action(ls: PlanServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        state = ls.state(params.text_document.uri)
        return actions.code_actions(state, params.context.diagnostics) if state else []

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def on_symbols(ls: PlanServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        state = ls.state(params.text_document.uri)
        return outline.symbols(state) if state else []

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
    def on_inlay(ls: PlanServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
        state = ls.state(params.text_document.uri)
        return outline.inlay_hints(state, params.range) if state else []


def serve() -> None:
    """Speak LSP over stdin/stdout until the client says exit.

    The protocol gets its own copies of the two descriptors, and ``sys.stdout``
    becomes stderr while serving: a stray print cannot corrupt a message, and
    closing the protocol's streams leaves the command's own streams usable."""
    logging.basicConfig(level=logging.WARNING)  # pygls logs to stderr, never stdout
    reader = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    writer = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    sys.stdout = sys.stderr
    create().start_io(reader, writer)
