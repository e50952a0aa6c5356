"""Diagnostic codes: severities, the ``Code`` type and the codes the stages raise.

A leaf module (it imports only the dtype table), so every stage can name its codes
as typed constants (``codes.UNKNOWN_NAME``, not ``"PC010"``) and mypy checks
them. The check rules PC020-PC108 declare their codes with ``@rule`` in
``plancc.rules``; the complete catalog is ``plancc.check.catalog()``.
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from plancc.tables.dtypes import DTYPES


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    # Printed and reported like the others, never counted against the exit code,
    # even under --strict: what plancc could not judge (PC208).
    NOTICE = "notice"


ERROR = Severity.ERROR
WARNING = Severity.WARNING
NOTICE = Severity.NOTICE


@dataclass(frozen=True)
class Code:
    id: str
    name: str
    severity: Severity
    doc: str  # the text of `plancc explain`, dedented

    def __post_init__(self) -> None:
        object.__setattr__(self, "doc", inspect.cleandoc(self.doc))


YAML_SYNTAX: Final = Code(
    "PC001",
    "yaml-syntax",
    ERROR,
    """
The file cannot be read as a plan document: it is not UTF-8, is larger than
4 MiB, is not well-formed YAML (a control character included), has a
duplicate mapping key (reported at the second occurrence), nests deeper than
64 levels, or has more than 500,000 nodes counting each alias expanded (an
"alias bomb"; it is rejected without being expanded). Plain scalars are typed
by the YAML 1.2 core schema alone, so `2024-01-01`, `0b11` and `1_000` are
strings. Plans are plain data: a tag other than the standard scalar, list and
mapping ones (`!!python/...`, `!!binary`, `!!timestamp`), a merge key (`<<`)
or an integer that does not fit in 64 bits is PC001 too.

Fix: correct the YAML at the reported position.
""",
)
STRUCTURE: Final = Code(
    "PC002",
    "structure",
    ERROR,
    """
The plan does not have the structure of format version 1: an unknown key
(reported at the key), a missing required key (reported at the mapping that
lacks it), a value of the wrong YAML type (reported at the value), a platform
that is not in the platform table, `allow` without a `reason`, or a `reason`
without an `allow` (it explains nothing).

Fix: compare with `plancc schema` or the example in docs/plan-format.md;
editors complete keys when the plan starts with
`# yaml-language-server: $schema=../schemas/warm-plan.schema.json`.
""",
)
VERSION: Final = Code(
    "PC003",
    "version",
    ERROR,
    """
`plancc:` is not the integer 1. Version 1 is the only plan format; the string
"1" is not accepted either, so that a future version can never be misread.
""",
)
BAD_SILENCE: Final = Code(
    "PC004",
    "bad-silence",
    WARNING,
    """
`allow:` on a warm or `lint.ignore:` names an error code or a code that does
not exist. Errors cannot be silenced, so the entry silences nothing.

Fix: remove the entry, or fix the error it tried to hide.
""",
)
UNUSED_SILENCE: Final = Code(
    "PC006",
    "unused-silence",
    WARNING,
    """
An `allow` entry of a warm, or a `lint.ignore` entry, silences nothing in this
run: the warning it names does not fire on that warm (or anywhere in the
plan), the list names it twice, or it names PC004, which is never silenced.
Reported at the entry, like ruff's RUF100.
A stale suppression is worse than none: it would silently hide the next real
finding of that rule, long after its `reason` stopped being true.

It is reported only for a plan without errors (an error can hide the very
finding an entry is there for), and not for the entries of a warm whose
anchor names no stage or whose layer kind lost a stage to a schema error.
An `allow` or `lint.ignore` of PC006 silences it like any warning.

Fix: remove the entry; its fix (safe) does, and removes the whole `allow` (with
its `reason`) or `lint` when every entry is stale.
""",
)
CONFIG_FILE: Final = Code(
    "PC005",
    "config-file",
    ERROR,
    """
The `config:` file cannot be used: it is missing or unreadable, is not a
regular file, is larger than 4 MiB, is not JSON, repeats a key in an object
(JSON keeps one of the two silently; the message names the key and its lines,
as a duplicate key in the plan is PC001), its top level is not an object, or a
key the plan uses is not an integer. Reported at the `config` node. A message
names a key of the file and its value's type (`a string`), never the value
but a number: a plan may name any JSON file on the machine that checks it.
""",
)
UNKNOWN_NAME: Final = Code(
    "PC010",
    "unknown-name",
    ERROR,
    """
A name refers to nothing: a dim or config key in an expression, a tensor in
`reads` or a warm, a stage in `after` or `deps`, a layer kind in `forward`. The message
suggests the closest defined name. What follows only from it is not reported
while it stands: with a name of a stage's `deps` or `reads` unknown, the rules
that judge the layer kind's graph and readers (PC030, PC032, PC040-PC042,
PC101-PC108, PC201-PC206) skip the kind; with one of a warm's
`tensors` or `after` unknown, those that judge the warm as a whole (PC040,
PC042, PC101-PC107) skip the warm, and the budget rules (PC030, PC032) its
layer kind (its peak would be a guess).

Fix: its fix (unsafe: a guess) replaces the name by the closest one, where the
node is the name itself and its list does not hold that name already.
""",
)
DUPLICATE_NAME: Final = Code(
    "PC011",
    "duplicate-name",
    ERROR,
    """
A name is defined twice where it must be unique. Dims, the config keys a plan
uses, tensors and warms share one namespace (they all become names in the
generated module); warm names are unique across the plan; stage names within
a layer kind; a tensor may appear once per warm; two plans of one build may
not have the same `model`, compared ignoring case (their files would collide
on a case-insensitive filesystem). Two stages of one layer kind may not have
the same `task` (two warms gated by one TaskId are the split PC101 warns of),
a stage's `deps` may not name a stage twice, and two `forward.kinds` keys may
not be the same integer (`4` and `04`, `0` and `-0`): reported at the second.

Fix: a tensor listed twice in one warm has a fix (safe: the second moves bytes
the first has landed already): it removes the second.
""",
)
BAD_EXPRESSION: Final = Code(
    "PC012",
    "bad-expression",
    ERROR,
    """
A dim expression does not parse, uses something other than decimal integers,
names, `+ - * // %` and parentheses, contains a literal 0, divides by zero,
depends on itself (the message names the cycle), or evaluates to less than 1.
Values stay within 64 bits (2**63 - 1, for every dim and for a tensor's, a
stack's or a flat view's element count, and for a tensor's or a stack's bytes)
and an expression has at most 200 tokens.
""",
)
BAD_IDENTIFIER: Final = Code(
    "PC013",
    "bad-identifier",
    ERROR,
    """
A name that reaches generated code is not usable there: it must match
`[A-Za-z][A-Za-z0-9_]*` (ASCII, not starting with `_`), be at most 100
characters long and must not be a Python keyword. Dims, tensors and warms
also must not be `pl`, `after` or `warm_ctx`, or end in `_flat`: the
generated module uses those names. So must a guard's variable (its param's
`source`, else the param's name in lower case), a parameter of the generated
function.
""",
)
BAD_FORWARD: Final = Code(
    "PC014",
    "bad-forward",
    ERROR,
    """
`forward` cannot be expanded: a `from_config` key that is not a list of
integers, a list value with no entry in `kinds`, or `layers` larger than the
list. The message names the value (its type when it is no number) and the
layer index. A `repeat` or `layers` over a `dynamic` dim, a forward of more
than 100,000 layers, or an empty one (`forward: []`, or a config list with no
entries), is PC014 too.
""",
)
BAD_DEPS: Final = Code(
    "PC015",
    "bad-deps",
    ERROR,
    """
A stage's `deps` names the stage itself or a stage listed after it. A stage
waits only for stages listed earlier, so the list is always one valid order
of the layer kind's graph (and can have no cycle). Reported at the entry.

Fix: list the stages in an order in which each comes after its `deps`.
""",
)
UNKNOWN_DTYPE: Final = Code(
    "PC023",
    "unknown-dtype",
    ERROR,
    # Derived from the dtype table, so that a new dtype needs no edit here.
    textwrap.fill(f"The dtype is not a PyPTO dtype name (lower case): {' '.join(DTYPES)}.", 78),
)

SOURCE_UNCHECKED: Final = Code(
    "PC200",
    "source-unchecked",
    WARNING,
    """
A layer kind's `source` cannot be checked: the `source_root` directory (or
`--source-root DIR`) does not exist, the file is missing, unreadable, larger
than 4 MiB or does not parse, or it defines no such function. The message says
what was looked for and where. A check that silently does not run proves
nothing, so with `--strict` this fails the build like any warning.

Fix: point `source_root` (or `--source-root`) at a checkout of the model
repository, or correct the `PATH:FUNCTION` of `source`.
""",
)
SOURCE_TASK: Final = Code(
    "PC201",
    "source-task",
    ERROR,
    """
A stage's `task` is bound by no scope (`with pl.spmd(...) as tid:`) or helper
return (`tid = helper(...)`) of the layer function in its source: the
generated call `warm(..., tid)` would name a variable that does not exist, and
the model build would fail.

Fix: name a task the layer function binds (the hint lists them), or bind it
in the code: `with ... as tid:` on the stage's kernel, `return tid` from its
helper and `tid = helper(...)` at the call. When the function binds exactly one
task on a kernel of the stage's run that no other stage names, outside a loop,
its fix (unsafe) names that one.
""",
)
SOURCE_KERNEL: Final = Code(
    "PC202",
    "source-kernel",
    WARNING,
    """
A stage's `kernel` is no kernel of its source: no `pl.at` or `pl.spmd` scope
of the layer function or its inline helpers has that name (as PyPTO names
them: the first keeps its `name_hint`, a repeat gets `_0`, then `_1`, ...).
`plancc measure` finds stages by kernel name, and the source checks map stages
to code by it. Also when a stage's `task` is the task of a kernel outside the
stage's run (docs/sources.md): its warms would be issued at another stage's
finish.

Fix: write the kernel's name as the source has it (the hint suggests the
closest), or correct the `name_hint` in the code; give the task to the stage
whose run holds its kernel.
""",
)
SOURCE_READS: Final = Code(
    "PC203",
    "source-reads",
    WARNING,
    """
A stage's `reads` differ from the static tensors its kernels read in the
source (the stage's run: its `kernel`, and each kernel for which it is the
last, in program order, of the stages' kernels it waits on; docs/sources.md).
Only tensors the plan declares are compared; the message names what the plan
misses and what it has in excess. Every L2 rule counts these bytes.

Fix: make `reads` what the code reads.
""",
)
SOURCE_ORDER: Final = Code(
    "PC204",
    "source-order",
    WARNING,
    """
The plan's order of two stages contradicts the source's: one runs after the
other in the plan (its `deps`, or list order without them) but beside or
before it in the source, or the reverse. In the source a kernel runs after
the kernels of its `deps=` (a `pl.system.task_dummy` barrier stands for what it
waits on) and after the kernels that last wrote what it reads or writes, as
PyPTO's runtime orders tasks; a stage's run of kernels runs after another's
when some kernel of it waits on some kernel of the other, or through a chain
of such runs. The message names both runs and their lines. PC102 and PC104
give opposite advice on the wrong order.

Fix: give the stage the `deps` the code has, or change the code.
""",
)
SOURCE_WARM: Final = Code(
    "PC205",
    "source-warm",
    WARNING,
    """
The source runs a warm the plan does not declare: an `async_prefetch` scope,
or a call of a generated warm function, that matches no warm of the layer
kind (by `name_hint`, tensors and anchor task, or by the function's name).
Two warms would share L2 and SDMA, and the plan's budget would not count one.
The message names the `if`s it is issued under.

Fix: declare the warm in the plan, or remove it from the code. For a scope
whose anchor and tensors the plan names, its fix (unsafe: plancc then
generates and judges the warm) adds the declaration the hint prints: a
prefix's `rows`, `next_layer` for the next layer's slabs, a `guard` for each
`if` on a param's `source` (a variable no param is: the hint says to declare
one first, and there is no fix).
""",
)
SOURCE_CALL: Final = Code(
    "PC206",
    "source-call",
    WARNING,
    """
A warm of the plan has no call site in the source: the layer function neither
calls its generated function (`prefetch_w(wo_a, wo_b, q_rope_tid)`, imported
from the generated `<model>_warms` module) nor has a scope with its
`name_hint`, its tensors in issue order (a prefix's rows, a stack's slab at
its index: the next layer's, `layer_idx + 1`, for a cross-layer warm) and its
anchor's task in `deps=`; or it does, under other `if`s than the warm's
guards (`if ctx_len <= 2272:` on the param's `source`), or a cross-layer
warm's call is not spared the last layer (`if layer_idx < NUM_LAYERS - 1:`).
A cross-layer warm's call may stand outside the layer function, between one
layer and the next in a function of its directory. A warm that is not issued
saves nothing; one issued where the plan does not say is not what was judged.

Fix: call the generated function after the anchor's task is bound, as its
hint says (with each guard's variable), or remove the warm.
""",
)
SOURCE_SHAPE: Final = Code(
    "PC207",
    "source-shape",
    ERROR,
    """
A tensor's shape or dtype differs from the annotation of the source parameter
it stands for (`pl.Tensor[[dims], pl.DTYPE]`, each dim evaluated from the
module's constants and the model config it binds). The bytes, the flat view
and the budget would all be wrong. A plan tensor stands for the parameter of
its own name, or the one a layer kind's `source_params` maps it to. A
`dynamic` dim of the plan accepts any annotation (the plan counts none of its
bytes); a fixed dim where the code has `pl.dynamic(...)` is PC207.

Fix: correct the tensor's `shape` or `dtype`, or the mapping.
""",
)
SOURCE_UNRESOLVED: Final = Code(
    "PC208",
    "source-unresolved",
    NOTICE,
    """
Part of the source cannot be resolved without running it: a helper chosen at
import time (from an environment variable), a branch on something that is not
a constant, a call of a plain Python function given tensors, a parameter's
dim whose constant is chosen at import time. The message names the line. A
model file that blocks on read (it waits for data, as `/proc/kmsg` does, or is
not read within 2 seconds) is not judged either: the layer kind's source, or
the module it imports, is named instead.
The reader takes such code as a kernel that may read and write every tensor
it is given, with any of the names its code could give; the checks that
depend on it are skipped, not guessed. A notice: it never changes the exit
code.
""",
)
SOURCE_LOOP_TASK: Final = Code(
    "PC209",
    "source-loop-task",
    WARNING,
    """
A stage's `task` is bound inside a loop of its source (outside kernels) whose
kernels are all the stage's: the stage runs once per tile or iteration, and
the variable holds only the last iteration's TaskId (Qwen3-14B's `out_proj`
binds `out_tid` once per tile). A warm anchored on it is issued when that one
iteration finishes, not the stage.

Fix: join the loop's tasks after it, as the hint says: collect them in a task
array (`tids = pl.array.create(N, pl.TASK_ID)`, `tids[i] = ...` in the loop)
and bind the stage's task to `pl.system.task_dummy(deps=[tids])` after the
loop.
""",
)

SOURCE_CODES: Final = (
    SOURCE_UNCHECKED,
    SOURCE_TASK,
    SOURCE_KERNEL,
    SOURCE_READS,
    SOURCE_ORDER,
    SOURCE_WARM,
    SOURCE_CALL,
    SOURCE_SHAPE,
    SOURCE_UNRESOLVED,
    SOURCE_LOOP_TASK,
)


# The codes the stages raise (load, validate, resolve, check), in id order.
STAGE_CODES: Final = (
    YAML_SYNTAX,
    STRUCTURE,
    VERSION,
    BAD_SILENCE,
    UNUSED_SILENCE,
    CONFIG_FILE,
    UNKNOWN_NAME,
    DUPLICATE_NAME,
    BAD_EXPRESSION,
    BAD_IDENTIFIER,
    BAD_FORWARD,
    BAD_DEPS,
    UNKNOWN_DTYPE,
    *SOURCE_CODES,
)
