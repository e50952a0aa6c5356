"""The names of a plan's output files, derived from its model."""

from __future__ import annotations


def module_file(model: str) -> str:
    return f"{model}_warms.py"


def manifest_file(model: str) -> str:
    return f"{model}_warms.manifest.json"
