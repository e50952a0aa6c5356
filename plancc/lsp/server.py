"""The server: documents in, diagnostics out, and requests routed to the feature modules.

Nothing slow runs on the event loop, which reads the client's messages and
publishes diagnostics: checks run in one worker thread, requests (hover,
completion, outline, …) in another. A request answers from its document's
state as it came: when changes to that document still wait for their check,
from the first state to have seen them (``PlanServer.answer``), never from an
older text; changes to other documents do not hold it. A request gives way
to a check, once (``PlanServer.pause``): before it starts, or between the items
of a long answer: a diagnostic never waits for a request to end, and changes
in a row (typing) never starve a request.

A change is checked at once, with no debounce: the check of a plan users have
takes a few milliseconds, less than a timer would wait. Changes that come
during a check are checked together after it, the newest text: a result for a
text already replaced is not published.

No document waits on another's model code: documents are checked ``CHECKERS`` at
a time (one document's checks one after another), a check waiting for a model
file's read (up to ``READ_SECONDS``: one that blocks) gives its turn to another
meanwhile, the reading of
a check's model code stops itself ``CHECK_SECONDS`` after the check starts (its
budget of work looks at the clock: ``plancc.source.limits``; the check then
publishes what it has, with a PC208 notice), a request gives way to
a running check for at most ``PAUSE_SECONDS``, and `exit` ends the process
without waiting for any thread.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument, Workspace
from pygls.workspace.position_codec import PositionCodec

from plancc import __version__
from plancc.lsp import actions, completion, hover, navigation, outline, transport
from plancc.lsp.adapter import split_lines, yielding
from plancc.lsp.diagnostics import to_lsp
from plancc.lsp.settings import SETTING, Settings, configured
from plancc.lsp.state import PlanState, analyse, path_of

CHECKERS = 4  # documents checked at once
# Documents whose checks may be under way at once: beyond CHECKERS, those waiting for a
# model file's read (which gives its slot back: ``yielding``), a thread each.
CHECK_THREADS = 64
CHECK_SECONDS = 5.0  # a check's model code read for at most this long (its cold Flash: 0.4 s)
PAUSE_SECONDS = 0.5  # a request waits at most this long for a running check (10³ warms: 0.2)
_PLAN_SUFFIXES = (".yaml", ".yml")
Reply = Any  # what pygls sends as the result: JSON's values


class PlanServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("plancc", __version__, protocol_cls=transport.Protocol)
        self.plans: dict[str, PlanState] = {}  # uri -> the latest checked state
        self.good: dict[str, PlanState] = {}  # uri -> the latest state that parsed
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.dirty: set[str] = set()
        self.checker = ThreadPoolExecutor(CHECK_THREADS, thread_name_prefix="plancc-check")
        self.slots = threading.BoundedSemaphore(CHECKERS)  # the checks computing
        # One thread for every request: each state's index is built once, by it.
        self.answerer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="plancc-answer")
        self.to_json = get_converter()  # the request thread's own: lsprotocol's hooks
        # Per document: the changes so far, and how many of them its newest state has
        # seen; a request waits for the state of the changes that came before it.
        self.changes: dict[str, int] = {}
        self.seen: dict[str, int] = {}
        self.checked = threading.Condition()  # notified whenever ``seen`` grows
        self.idle = threading.Event()  # set while no check runs
        self.idle.set()
        self.running = 0  # checks running (``idle`` is set when none)
        self.counting = threading.Lock()
        self.yields = 0  # the waits for a check the running request has left (``pause``)
        self.ended = False  # the client has gone: nothing waits for a check any more
        self.settings = Settings()
        self.shut_down = False  # a `shutdown` request came: `exit` (or the end of input) is 0

    async def answer(
        self, uri: str, fn: Callable[..., object], *args: Any, empty: object = None
    ) -> Reply:
        """``fn(state, *args)`` as JSON, in the request thread, on the state of ``uri``
        as the request came (``empty`` without one): the newest checked state then, or,
        while changes to ``uri`` wait for their check, the first state to have seen
        them all."""
        target = self.changes.get(uri, 0)
        ready = self.seen.get(uri, 0) >= target
        # Taken now: a change checked while an earlier request runs must not move the
        # positions under this one.
        current = self.plans.get(uri) if ready else None

        def answer() -> Reply:
            state = current if ready else self._state_after(uri, target)
            self.yields = 1
            self.pause()
            # As JSON's values: pygls sends them as they are, and the event loop, which
            # publishes the diagnostics, only encodes them (an outline of 10³ warms took
            # the loop 250 ms to convert from lsprotocol's objects, 15 to encode).
            return self.to_json.unstructure(empty if state is None else fn(state, *args))

        return await asyncio.get_running_loop().run_in_executor(self.answerer, answer)

    def pause(self) -> None:
        """In the request thread, before a request and between the items of a long one:
        wait while a check runs, once per request. The check of a change that comes
        during a request goes first, so its diagnostic does not wait for the request
        to end; a request is never held longer than one check, nor than
        ``PAUSE_SECONDS`` (a costly check of another document), so changes in a row
        (typing) do not starve it: after its one wait it shares the interpreter."""
        if self.yields and not self.idle.is_set() and not self.ended:
            self.yields -= 1
            self.idle.wait(PAUSE_SECONDS)

    def _state_after(self, uri: str, changes: int) -> PlanState | None:
        """In the request thread: the state of ``uri`` once its first ``changes`` changes
        have been checked (or the document closed)."""
        with self.checked:
            self.checked.wait_for(lambda: self.ended or self.seen.get(uri, 0) >= changes)
        return self.plans.get(uri)

    def release(self) -> None:
        """The client has gone (`exit`, or the end of its input): a request waiting for a
        check that will never run goes on, so the process can end (Python waits for the
        request thread at exit)."""
        with self.checked:
            self.ended = True
            self.checked.notify_all()
        self.idle.set()

    def _seen(self, uri: str, changes: int) -> None:
        with self.checked:
            self.seen[uri] = changes
            self.checked.notify_all()

    # -- checking ------------------------------------------------------------------------

    def schedule(self, uri: str) -> None:
        self.changes[uri] = self.changes.get(uri, 0) + 1
        self.dirty.add(uri)
        if uri not in self.tasks:
            self.tasks[uri] = asyncio.ensure_future(self._check_loop(uri))

    async def _check_loop(self, uri: str) -> None:
        try:
            while uri in self.dirty:
                self.dirty.discard(uri)
                doc = self.workspace.text_documents.get(uri)
                if doc is None:  # closed meanwhile
                    return
                changes = self.changes[uri]
                args = (uri, doc.version, doc.source, self._unsaved())
                loop = asyncio.get_running_loop()
                checked = await loop.run_in_executor(self.checker, self._analyse, *args)
                if isinstance(checked, str):
                    self.log(lsp.MessageType.Error, checked)
                    self._seen(uri, changes)  # requests answer from the state before
                    continue
                state, diagnostics = checked
                if uri not in self.workspace.text_documents:  # closed during the check
                    return
                self.plans[uri] = state  # requests answer from it, published or not
                if state.result.doc is not None:  # it parsed: completion's names come from it
                    self.good[uri] = state
                self._seen(uri, changes)
                if uri in self.dirty:  # the text changed during the check: check the newest
                    continue
                self.text_document_publish_diagnostics(
                    lsp.PublishDiagnosticsParams(uri, diagnostics, version=state.version)
                )
        finally:
            self.tasks.pop(uri, None)

    def _analyse(
        self, uri: str, version: int | None, source: str, unsaved: dict[Path, str]
    ) -> tuple[PlanState, list[lsp.Diagnostic]] | str:
        """The state of one text and its diagnostics, or the report of an internal error
        (logged by the loop)."""
        with self.counting:
            self.running += 1
            self.idle.clear()
        try:
            with self.slots, yielding(self.slots):
                state = analyse(
                    uri,
                    version,
                    source,
                    unsaved,
                    codec=self.workspace.position_codec,
                    docs_url=self.settings.docs_url,
                    pause=self.pause,
                    source_root=self.settings.source_root,
                    seconds=CHECK_SECONDS,
                )
                return state, to_lsp(state)
        except Exception:  # a bug, never the plan's fault: say so, keep serving
            return f"plancc: internal error\n{traceback.format_exc()}"
        finally:
            with self.counting:
                self.running -= 1
                if not self.running:
                    self.idle.set()

    def set_source_root(self, where: str, value: object) -> None:
        """Every open plan is checked again when the root it means changed."""
        if self.settings.give(where, value):
            for uri in list(self.workspace.text_documents):
                if is_plan(uri):
                    self.schedule(uri)

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

    def ask_settings(self) -> None:
        """Ask a client that can say for the workspace setting `plancc.sourceRoot`."""
        caps = self.client_capabilities.workspace
        if caps is None or not caps.configuration:
            return
        item = lsp.ConfigurationItem(section="plancc")
        asked = self.workspace_configuration(lsp.ConfigurationParams([item]))
        # On the event loop, which reads the answer.
        asked.add_done_callback(lambda answer: self.set_source_root(SETTING, configured(answer)))

    def log(self, kind: lsp.MessageType, message: str) -> None:
        self.window_log_message(lsp.LogMessageParams(kind, message))


class PlanDocument(TextDocument):
    """A buffer whose lines are LSP's (ending at LF, CRLF, CR), which the client's
    positions count: pygls splits as ``str.splitlines``, also at U+2028, U+0085,
    U+2029, VT and FF, and would apply every later edit a line off."""

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(split_lines(self.source))


class PlanWorkspace(Workspace):
    """pygls's workspace, its buffers ``PlanDocument``s."""

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return PlanDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


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
        # pygls made the workspace just before: its buffers count lines as LSP does.
        ls.workspace.__class__ = PlanWorkspace
        ls.settings.initialize(params)

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: PlanServer, params: lsp.InitializedParams) -> None:
        caps = ls.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps else None
        if watched is not None and watched.dynamic_registration:
            watch = lsp.FileSystemWatcher(glob_pattern="**/*.json")
            options = lsp.DidChangeWatchedFilesRegistrationOptions(watchers=[watch])
            reg = lsp.Registration("plancc-config", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, options)
            ls.client_register_capability(lsp.RegistrationParams([reg]))
        ls.ask_settings()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def configuration(ls: PlanServer, params: lsp.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("plancc"), dict):
            ls.set_source_root(SETTING, settings["plancc"].get("sourceRoot"))
        else:  # the client sent none with it (VS Code sends null): ask for them
            ls.ask_settings()

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
            ls._seen(uri, ls.changes.get(uri, 0))  # a waiting request answers: no state
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))
        else:  # its unsaved text is gone: plans read the file again
            ls.recheck_users_of(uri)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: PlanServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            changed(ls, change.uri)


def _wire_features(server: PlanServer) -> None:  # noqa: C901 (the protocol's feature handlers, each a short function registered here)
    """Each request is answered in the request thread (``answer``); a document never
    opened (or not checked yet) gets the empty answer."""

    @server.feature(lsp.SHUTDOWN)
    def on_shutdown(ls: PlanServer, params: None) -> None:
        ls.shut_down = True

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: PlanServer, params: lsp.HoverParams) -> Reply:
        return await ls.answer(params.text_document.uri, hover.hover, params.position)

    triggers = [" ", "[", ",", "-", "*", "+", "(", "/"]

    @server.feature(
        lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=triggers)
    )
    async def on_completion(ls: PlanServer, params: lsp.CompletionParams) -> Reply:
        uri = params.text_document.uri
        document = ls.workspace.text_documents.get(uri)
        if document is None:  # never opened: pygls would read the file from disk
            return None
        # The buffer as it is now (half-typed text need not parse), the names from the
        # last text that did.
        source, codec = document.source, ls.workspace.position_codec
        return await ls.answer(uri, _complete, ls.good, source, params.position, codec, empty=[])

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    async def on_definition(ls: PlanServer, params: lsp.DefinitionParams) -> Reply:
        uri, unsaved = params.text_document.uri, ls._unsaved()
        return await ls.answer(uri, navigation.definition, params.position, unsaved, empty=[])

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    async def on_references(ls: PlanServer, params: lsp.ReferenceParams) -> Reply:
        uri, declaration = params.text_document.uri, params.context.include_declaration
        return await ls.answer(uri, navigation.references, params.position, declaration, empty=[])

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    async def on_prepare_rename(ls: PlanServer, params: lsp.PrepareRenameParams) -> Reply:
        uri = params.text_document.uri
        return await ls.answer(uri, navigation.prepare_rename, params.position)

    @server.feature(lsp.TEXT_DOCUMENT_RENAME)
    async def on_rename(ls: PlanServer, params: lsp.RenameParams) -> Reply:
        uri = params.text_document.uri
        return await ls.answer(uri, navigation.rename, params.position, params.new_name)

    kinds = [lsp.CodeActionKind.QuickFix]

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=kinds))
    async def on_code_action(ls: PlanServer, params: lsp.CodeActionParams) -> Reply:
        uri, diagnostics = params.text_document.uri, params.context.diagnostics
        return await ls.answer(uri, actions.code_actions, diagnostics, empty=[])

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def on_symbols(ls: PlanServer, params: lsp.DocumentSymbolParams) -> Reply:
        return await ls.answer(params.text_document.uri, outline.symbols, empty=[])

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
    async def on_inlay(ls: PlanServer, params: lsp.InlayHintParams) -> Reply:
        uri = params.text_document.uri
        return await ls.answer(uri, outline.inlay_hints, params.range, empty=[])


def _complete(
    state: PlanState,
    good: dict[str, PlanState],
    source: str,
    position: lsp.Position,
    codec: PositionCodec,
) -> lsp.CompletionList:
    at = codec.position_from_client_units(split_lines(source), position)  # code points
    return completion.complete(good.get(state.uri), source, lsp.Position(at.line, at.character))


def serve() -> None:
    """Speak LSP over stdin/stdout until the client says `exit` or its input ends, then end
    the process at once, with status 1 when it did not say `shutdown` first, as the
    protocol asks.

    The protocol gets its own copies of the two descriptors, and ``sys.stdout``
    becomes stderr while serving: a stray print cannot corrupt a message, and
    closing the protocol's streams leaves the command's own streams usable."""
    logging.basicConfig(level=logging.WARNING)  # pygls logs to stderr, never stdout
    reader = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    writer = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    sys.stdout = sys.stderr
    # A full collection walks every object alive (the open plans' states, the model code's
    # kept readings): by default one came after nearly every check of a large plan (+60 ms
    # at 10³ warms). After 100 collections of the middle generation instead of 10, it
    # still frees the cycles checks leave, a few checks later.
    gc.set_threshold(700, 10, 100)
    server = create()
    try:
        code = transport.run(server, reader, writer, shut_down=lambda: server.shut_down)
    finally:
        server.release()
    if code is None:  # the input ended: as `exit`
        code = 0 if server.shut_down else 1
    # Not through the interpreter's exit, which joins every worker thread: a check still
    # running (a costly model code's, for up to CHECK_SECONDS) would hold the process.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)
