"""What the client says about where things are: the base of the rules' documentation
links and where the plans' model code starts, from the initialization options
(`docsUrl`, `sourceRoot`, `noSource`: skip the source checks, as `--no-source`) and the
workspace setting `plancc.sourceRoot`."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from plancc.lsp.adapter import NO_SOURCE
from plancc.lsp.diagnostics import default_docs_url
from plancc.lsp.state import path_of

OPTION, SETTING = "initializationOptions", "setting"  # where a source root was given


class Settings:
    def __init__(self) -> None:
        self.docs_url = default_docs_url()
        self.root_dir = Path.cwd()  # the workspace's root: a relative source root starts there
        self.roots: dict[str, str | None] = {OPTION: None, SETTING: None}
        self.no_source = False  # `noSource`: the source checks skipped on purpose

    def initialize(self, params: lsp.InitializeParams) -> None:
        given = params.initialization_options
        options = given if isinstance(given, dict) else {}
        if isinstance(options.get("docsUrl"), str):
            self.docs_url = options["docsUrl"]
        folders = params.workspace_folders
        root = folders[0].uri if folders else params.root_uri
        if root is not None and root.startswith("file:"):
            self.root_dir = path_of(root)
        self.no_source = options.get("noSource") is True
        self.give(OPTION, options.get("sourceRoot"))

    @property
    def source_root(self) -> str | None:
        """Where the plans' `source` paths start, as `--source-root` (None: each plan's
        own `source_root`): the workspace setting, else the initialization option."""
        if self.no_source:
            return NO_SOURCE
        given = self.roots[SETTING] or self.roots[OPTION]
        if given is None:
            return None
        try:
            path = Path(given).expanduser()
        except RuntimeError:  # `~someone` with no such user: the name as written, as a shell
            path = Path(given)
        return str(self.root_dir / path)

    def give(self, where: str, value: object) -> bool:
        """``value`` (a path; anything else unsets it) given by ``where``: whether the
        root it means changed."""
        before = self.source_root
        self.roots[where] = value if isinstance(value, str) and value else None
        return self.source_root != before


def configured(answer: Future[Sequence[Any]]) -> object:
    """`sourceRoot` in a client's answer to `workspace/configuration` for `plancc`."""
    if answer.cancelled() or answer.exception() is not None:
        return None
    found = answer.result()
    section = found[0] if found else None
    return section.get("sourceRoot") if isinstance(section, dict) else None
