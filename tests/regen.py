"""Regenerate every derived file: ``make regen``.

Derived from the code and its data tables (plancc/tables/dtypes.json, plancc/tables/platforms.json,
the models, the rule docstrings):

- schemas/warm-plan.schema.json: the JSON Schema of the models (`plancc schema`);
- plancc/schema/plan.py: the plan in memory, named tuples of the models (``tests.regen_model``);
- plancc/schema/gate.py: that schema compiled by fastjsonschema (``tests.regen_gate``);
- schemas/manifest.schema.json: its platform and dtype enums;
- docs/rules.md: the rule reference;
- docs/plan-format.md: the dtype list and the platform list of the example;
- tests/golden/: the build of every shipped plan (``tests.regen_golden``).

tests/test_regen.py fails while any of the first six is stale, tests/test_build.py
while a golden file is. Review the diff like any other change.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _enum(values: list[str]) -> str:
    return '"enum": ' + json.dumps(values)


def _manifest_schema(text: str) -> str:
    from plancc.tables import outputs
    from plancc.tables.dtypes import DTYPES
    from plancc.tables.platforms import PLATFORMS

    enums = {"a2a3": list(PLATFORMS), "bf16": list(DTYPES)}  # recognised by a first entry
    for first, values in enums.items():
        text = re.sub(rf'"enum": \["{first}"[^\]]*\]', lambda _, v=values: _enum(v), text)
    # The format id and the output names, as plancc.tables.outputs has them.
    said = {
        r'"const": "plancc-manifest/[^"]*"': f'"const": "{outputs.MANIFEST_FORMAT}"',
        r"format plancc-manifest/[^\s\",]*": f"format {outputs.MANIFEST_FORMAT}",
        r"as <model>[\w.]*\.": f"as <model>{outputs.MANIFEST_SUFFIX}.",
        r'\*(_\w+)\\\\\.py\$"': "*" + json.dumps(re.escape(outputs.MODULE_SUFFIX))[1:-1] + '$"',
    }
    for pattern, value in said.items():
        text = re.sub(pattern, lambda _, v=value: v, text)
    return text


def _plan_format(text: str) -> str:
    from plancc.tables.dtypes import DTYPES
    from plancc.tables.platforms import PLATFORMS

    text = re.sub(
        r"(PyPTO dtype name, lower case: `)[^`]*(`)",
        lambda m: m.group(1) + " ".join(DTYPES) + m.group(2),
        text,
    )
    return re.sub(
        r"(platform: \w+ +# )[\w |]+\n",
        lambda m: m.group(1) + " | ".join(PLATFORMS) + "\n",
        text,
        count=1,
    )


def _plan_schema() -> str:
    from plancc.schema.declared import json_schema_text

    return json_schema_text()


def _model() -> str:
    from tests import regen_model

    return regen_model.generate()


def _gate() -> str:
    from tests import regen_gate

    return regen_gate.generate(_plan_schema())


def _rules_doc() -> str:
    from tests.test_rules_doc import render_rules_doc

    return render_rules_doc()


MANIFEST = ROOT / "schemas" / "manifest.schema.json"
PLAN_FORMAT = ROOT / "docs" / "plan-format.md"
# Each derived file (but the goldens) and how its text is made (each when asked).
DERIVED: dict[Path, Callable[[], str]] = {
    ROOT / "schemas" / "warm-plan.schema.json": _plan_schema,
    ROOT / "plancc" / "schema" / "plan.py": _model,
    ROOT / "plancc" / "schema" / "gate.py": _gate,
    MANIFEST: lambda: _manifest_schema(MANIFEST.read_text("utf-8")),
    ROOT / "docs" / "rules.md": _rules_doc,
    PLAN_FORMAT: lambda: _plan_format(PLAN_FORMAT.read_text("utf-8")),
}


def main() -> int:
    from tests import regen_golden

    for path, make in DERIVED.items():
        text = make()
        if path.read_text("utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"{path.relative_to(ROOT).as_posix()}: written")
        else:
            print(f"{path.relative_to(ROOT).as_posix()}: unchanged")
    return regen_golden.main()


if __name__ == "__main__":
    sys.exit(main())
