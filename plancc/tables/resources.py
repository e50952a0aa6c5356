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

_HERE = Path(__file__).resolve().parent.parent  # the package's folder


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
    import contextlib  # noqa: PLC0415 (as jinja2)

    import jinja2  # noqa: PLC0415 (jinja2 only for build and report)
    from jinja2.bccache import Bucket, FileSystemBytecodeCache  # noqa: PLC0415 (as above)

    class Cache(FileSystemBytecodeCache):
        """Compiled templates kept between runs (compiling the report's template is half a
        cold `plancc report`), in jinja2's per-user cache directory under the system's
        temporary one; an entry is used only while its template's text is unchanged.
        A cache that cannot be written is no cache, never an error."""

        def dump_bytecode(self, bucket: Bucket) -> None:
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)

    try:
        cache: jinja2.BytecodeCache | None = Cache(pattern="plancc-%s.cache")
    except (OSError, RuntimeError):  # no usable temporary directory: compile each time
        cache = None
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: read_text("templates", name)),
        bytecode_cache=cache,
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
