"""Files that ship with plancc: the JSON Schemas and the code templates.

They live in the top-level ``schemas/`` and ``templates/`` folders. A wheel
installs them as the resource packages ``plancc.schemas`` and
``plancc.templates`` (see pyproject.toml); an editable install of a source
checkout reads them from the folders beside the package.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path


def resource_dir(name: str) -> Traversable:
    try:
        return files(f"plancc.{name}")
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / name


def read_text(folder: str, name: str) -> str:
    return resource_dir(folder).joinpath(name).read_text("utf-8")
