"""The plan format, version 1, as pydantic models: the one source of the JSON Schema.

``schemas/warm-plan.schema.json`` is generated from these models (``make
regen``; a test fails when the committed file drifts). Constraints that have
their own diagnostic code (the version, a name's form, a dtype) live in the
schema for editors but not in the models: ``names`` and ``resolve`` report
them as PC003, PC013 and PC023, so the models stay lenient there.

At run time a plan is ``plancc.schema.plan``'s named tuples, generated from these
models by ``make regen`` (tests/regen_model.py) with the patterns below and the
key order `plancc fmt` writes: pydantic is imported only to write the schema. A
key of the format is declared here and nowhere else.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt
from pydantic.json_schema import SkipJsonSchema

from plancc.tables.dtypes import DTYPES
from plancc.tables.engines import ENGINES
from plancc.tables.names import KEYWORDS, MAX_NAME, PLATFORMS, RESERVED, RESERVED_SUFFIX

_NOT_KEYWORD = "(?!(?:" + "|".join(sorted(KEYWORDS)) + ")$)"
# At most MAX_NAME characters, as names.identifier_problem checks (PC013).
NAME_PATTERN = f"^{_NOT_KEYWORD}[A-Za-z][A-Za-z0-9_]{{0,{MAX_NAME - 1}}}$"
# Dims, tensors and warms also avoid the generated module's own names (PC013).
_NOT_RESERVED = "(?!(?:" + "|".join(sorted(RESERVED)) + ")$)(?!.*" + RESERVED_SUFFIX + "$)"
UNRESERVED_NAME_PATTERN = NAME_PATTERN.replace("^", "^" + _NOT_RESERVED, 1)
# A stage's task names a variable of the model code, which may be private (`_heads_tid`).
TASK_PATTERN = NAME_PATTERN.replace("^", "^_*", 1)
# A model-code variable the generated function takes as a parameter (a stack's index): it
# may be private (`_layer_idx`); without its leading underscores it is an unreserved name.
_NOT_PRIVATE_RESERVED = (
    "(?!_*(?:" + "|".join(sorted(KEYWORDS | RESERVED)) + ")$)(?!.*" + RESERVED_SUFFIX + "$)"
)
PRIVATE_NAME_PATTERN = f"^{_NOT_PRIVATE_RESERVED}_*[A-Za-z][A-Za-z0-9_]{{0,{MAX_NAME - 1}}}$"
SOURCE_PATTERN = r"^.+:[A-Za-z_][A-Za-z0-9_]*$"  # a layer kind's source: PATH:FUNCTION
IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"  # a source parameter's name
SIZE_PATTERN = r"^\s*[0-9]{1,15}(\.[0-9]{1,15})?\s*(B|kB|MB|GB|KiB|MiB|GiB)\s*$"
# A `streams` dim expression: its characters only, and not a number and a word (a size
# whose unit is misspelt, `12 parsecs`, stays a size error).
STREAMS_EXPR_PATTERN = r"^(?!\s*[0-9.]+\s*[A-Za-z]+\s*$)[A-Za-z0-9_+*/%() \t-]+$"

SCHEMA_ID = "https://plancc.dev/schemas/warm-plan.schema.json"

Name = Annotated[str, Field(json_schema_extra={"pattern": NAME_PATTERN})]
TaskName = Annotated[str, Field(json_schema_extra={"pattern": TASK_PATTERN})]
UnreservedName = Annotated[str, Field(json_schema_extra={"pattern": UNRESERVED_NAME_PATTERN})]
DimExpr = Annotated[
    StrictInt | str,
    Field(description="an integer, a dim or config key name, or an expression over them"),
]
FlatView = Annotated[
    list[DimExpr],
    Field(min_length=1, description="[N], [1, N] or [1, 1, N]"),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Budget(_Strict):
    l2_fraction: Annotated[
        float, Field(strict=True, gt=0, le=1, description="warn (PC032) above this share of L2")
    ] = 0.75


class Stacked(_Strict):
    layers: Annotated[DimExpr, Field(description="how many layers the stack holds")]
    index: Annotated[
        str,
        Field(
            description="the model code's layer-index scalar (may start with _)",
            json_schema_extra={"pattern": PRIVATE_NAME_PATTERN},
        ),
    ]
    index_type: Annotated[
        str,
        Field(
            description="the index's scalar type in the model code (pl.INT32, …)",
            json_schema_extra={"enum": ["int32", "int64", "index"]},
        ),
    ] = "int32"


class Tensor(_Strict):
    shape: Annotated[list[DimExpr], Field(min_length=1)]
    dtype: Annotated[str, Field(json_schema_extra={"enum": list(DTYPES)})]
    flat: FlatView | SkipJsonSchema[None] = None
    stacked: (
        Annotated[
            Stacked,
            Field(description="every layer's copy in one tensor, stacked along the first dim"),
        ]
        | SkipJsonSchema[None]
    ) = None


class Read(_Strict):
    tensor: str
    share: Annotated[
        StrictInt | float | str,
        Field(description="the part of the tensor the stage reads, in (0, 1]: 6/17, 0.5"),
    ]


class Stage(_Strict):
    name: Name
    task: TaskName | SkipJsonSchema[None] = None
    deps: (
        Annotated[
            list[str],
            Field(description="the stages listed earlier that must finish before this one starts"),
        ]
        | SkipJsonSchema[None]
    ) = None
    reads: list[str | Read] = []
    streams: (
        Annotated[StrictInt, Field(ge=0)]
        | Annotated[str, Field(pattern=SIZE_PATTERN)]
        | Annotated[
            str,
            Field(
                description="a dim expression in bytes",
                json_schema_extra={"pattern": STREAMS_EXPR_PATTERN},
            ),
        ]
        | SkipJsonSchema[None]
    ) = None
    sdma: StrictBool = False
    # plancc's addition to the contract (docs/plan-format.md): PC105 judges a collective
    # whatever its engine, and names the engine.
    collective: (
        Annotated[
            str,
            Field(
                description="an inter-rank collective, by the engine that moves its data: "
                + ", ".join(f"{e.name} ({e.means})" for e in ENGINES.values()),
                json_schema_extra={"enum": list(ENGINES)},
            ),
        ]
        | SkipJsonSchema[None]
    ) = None
    group: str | SkipJsonSchema[None] = None
    duration_us: Annotated[float, Field(strict=True, ge=0)] | SkipJsonSchema[None] = None
    kernel: Name | SkipJsonSchema[None] = None


class WarmTensor(_Strict):
    tensor: str
    flat: FlatView | SkipJsonSchema[None] = None
    rows: (
        Annotated[
            list[DimExpr],
            Field(
                min_length=2,
                max_length=2,
                description="[LO, HI]: a prefix warm of the first dimension's rows LO to HI - 1",
            ),
        ]
        | SkipJsonSchema[None]
    ) = None


class Warm(_Strict):
    model_config = ConfigDict(
        json_schema_extra={"dependentRequired": {"allow": ["reason"], "reason": ["allow"]}}
    )

    name: UnreservedName
    name_hint: Name | SkipJsonSchema[None] = None
    after: Annotated[
        str | Annotated[list[str], Field(min_length=1)],
        Field(description="the anchor stage, or a list of stages (a join)"),
    ]
    next_layer: Annotated[
        StrictBool,
        Field(description="warm the tensors the next layer of the forward reads"),
    ] = False
    guard: (
        Annotated[
            str | Annotated[list[str], Field(min_length=1)],
            Field(
                description="PARAM <= EXPR (or >=, <, >): issue the warm only when it holds; "
                "a list: all of them"
            ),
        ]
        | SkipJsonSchema[None]
    ) = None
    # minItems in the schema only: a warm whose every item was bad stays checkable.
    tensors: Annotated[list[str | WarmTensor], Field(json_schema_extra={"minItems": 1})]
    allow: list[str] | SkipJsonSchema[None] = None
    reason: Annotated[str, Field(min_length=1)] | SkipJsonSchema[None] = None


class Layer(_Strict):
    source: (
        Annotated[
            str,
            Field(
                pattern=SOURCE_PATTERN,
                description="PATH:FUNCTION of the layer's model code, PATH from source_root",
            ),
        ]
        | SkipJsonSchema[None]
    ) = None
    source_params: Annotated[
        dict[str, Annotated[str, Field(pattern=IDENTIFIER_PATTERN)]],
        Field(description="plan tensor -> the source parameter it stands for"),
    ] = {}
    # after source: fmt writes the keys in this order
    stages: Annotated[list[Stage], Field(min_length=1)]
    warms: list[Warm] = []


class ForwardEntry(_Strict):
    layer: str
    repeat: DimExpr = 1


class ForwardFromConfig(_Strict):
    from_config: str
    kinds: Annotated[
        dict[str, str],
        Field(json_schema_extra={"propertyNames": {"pattern": "^-?[0-9]{1,18}$"}}),
    ]
    layers: DimExpr | SkipJsonSchema[None] = None


class Param(_Strict):
    default: DimExpr
    range: (
        Annotated[list[DimExpr], Field(min_length=2, max_length=2, description="[LO, HI]")]
        | SkipJsonSchema[None]
    ) = None
    source: (
        Annotated[
            str,
            Field(
                description="the model code's run-time variable (a guard's parameter); "
                "default the param's name in lower case",
                json_schema_extra={"pattern": PRIVATE_NAME_PATTERN},
            ),
        ]
        | SkipJsonSchema[None]
    ) = None


class Lint(_Strict):
    ignore: list[str] = []


class Plan(_Strict):
    model_config = ConfigDict(
        title="plancc warm plan, format version 1",
        json_schema_extra={"additionalProperties": False},
    )

    plancc: Annotated[int, Field(json_schema_extra={"const": 1})]
    model: Name
    platform: Annotated[str, Field(json_schema_extra={"enum": list(PLATFORMS)})]
    budget: Budget = Budget()
    config: str | SkipJsonSchema[None] = None
    source_root: (
        Annotated[
            str,
            Field(description="where the layer kinds' source paths start, relative to the plan"),
        ]
        | SkipJsonSchema[None]
    ) = None
    source_defines: Annotated[
        dict[str, StrictInt | StrictBool | str],
        Field(description="run-time choices of the model code, taken as these values"),
    ] = {}
    dims: Annotated[
        dict[str, StrictInt | str],
        Field(json_schema_extra={"propertyNames": {"pattern": UNRESERVED_NAME_PATTERN}}),
    ] = {}
    params: Annotated[
        dict[str, StrictInt | Param],
        Field(
            description="run-time parameters: a default and a range [LO, HI]",
            json_schema_extra={"propertyNames": {"pattern": UNRESERVED_NAME_PATTERN}},
        ),
    ] = {}
    tensors: Annotated[
        dict[str, Tensor],
        Field(json_schema_extra={"propertyNames": {"pattern": UNRESERVED_NAME_PATTERN}}),
    ]
    layers: Annotated[
        dict[str, Layer],
        Field(json_schema_extra={"propertyNames": {"pattern": NAME_PATTERN}, "minProperties": 1}),
    ]
    # minItems in the schema only: an empty forward is PC014, reported by resolve.
    forward: (
        Annotated[list[str | ForwardEntry], Field(json_schema_extra={"minItems": 1})]
        | ForwardFromConfig
        | SkipJsonSchema[None]
    ) = None
    lint: Lint = Lint()


def _without_null_defaults(node: Any) -> Any:
    # Optional keys default to "absent", not to null: a null default would
    # tell editors to write `task: null`, which the format does not accept.
    if isinstance(node, dict):
        return {
            k: _without_null_defaults(v)
            for k, v in node.items()
            if not (k == "default" and v is None)
        }
    if isinstance(node, list):
        return [_without_null_defaults(v) for v in node]
    return node


def json_schema() -> dict[str, Any]:
    schema = _without_null_defaults(Plan.model_json_schema())
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
    }


def json_schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
