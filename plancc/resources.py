"""Files that ship with plancc: the JSON Schemas and the code templates.

They live in the top-level ``schemas/`` and ``templates/`` folders. A wheel
installs them as the resource packages ``plancc.schemas`` and
``plancc.templates`` (see pyproject.toml); an editable install of a source
checkout reads them from the folders beside the package. Both are plain
folders, read directly; importlib.resources (15 ms to import) only serves an
install that is not one (a zip).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import jinja2

_HERE = Path(__file__).resolve().parent


def resource_dir(name: str) -> Traversable:
    for folder in (_HERE / name, _HERE.parent / name):  # a wheel's, then a checkout's
        if folder.is_dir():
            return folder
    from importlib.resources import files  # noqa: PLC0415 (only for a zipped install)

    return files(f"plancc.{name}")


def read_text(folder: str, name: str) -> str:
    return resource_dir(folder).joinpath(name).read_text("utf-8")


def template_environment(*, autoescape: bool) -> jinja2.Environment:
    """A jinja2 environment over the shipped templates, strict about undefined names:
    the generated module (no escaping: it quotes every literal itself) and the HTML
    report (autoescaped) share it. jinja2 is imported here so ``validate`` never loads it."""
    import jinja2  # noqa: PLC0415 (jinja2 only for build and report)

    return jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: read_text("templates", name)),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
