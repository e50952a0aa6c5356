"""The command line through typer: help, shell completion and usage errors.

Each command of ``plancc.cli.commands`` becomes a typer command whose parameters are
built from the command's own signature (its ``Option`` and ``Argument``
declarations), so an option is declared once, there. Each runs under
``plancc.cli.console.guarded`` (one-line errors, exit 2). ``plancc.cli.launch``, the
console script, comes here only for what it does not read itself.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, NoReturn

import typer
import typer.core

from plancc.cli import commands, console
from plancc.cli.options import COMMANDS, REQUIRED, Argument, Param, params_of


class _Command(typer.core.TyperCommand):
    """A command whose help names each argument and value by its metavar (``PATH...``,
    ``--out DIR``), not by its Python type."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        return pieces + [_argument_name(p) for p in self.get_params(ctx) if _is_argument(p)]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        params: list[Any] = self.get_params(ctx)
        arguments = [
            (_argument_name(p), p.help + ("  [required]" if p.required else ""))
            for p in params
            if _is_argument(p)
        ]
        options = [r for p in params if not _is_argument(p) if (r := p.get_help_record(ctx))]
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def _is_argument(param: Any) -> bool:
    return bool(param.param_type_name == "argument")


def _argument_name(param: Any) -> str:
    name = str(param.metavar) + ("..." if param.nargs != 1 else "")
    return name if param.required else f"[{name}]"


def _typer_parameter(p: Param) -> inspect.Parameter:
    """``p`` as typer reads a parameter: ``Annotated[type, typer.Option(...)]``."""
    decl = p.decl
    if isinstance(decl, Argument):
        info: Any = typer.Argument(metavar=decl.metavar, help=decl.help, show_default=False)
    else:
        callback = None
        if decl.action is not None:
            action = decl.action

            def callback(value: bool) -> None:
                if value:
                    raise typer.Exit(console.guarded(action))

        info = typer.Option(
            *decl.names,
            help=decl.help,
            metavar=p.metavar,
            show_default=p.choices is not None,
            is_eager=decl.action is not None,
            callback=callback,
        )
    base = list[str] if p.many else p.type
    default = inspect.Parameter.empty if p.default is REQUIRED else p.default
    if p.many and default == ():
        default = []
    kind = inspect.Parameter.KEYWORD_ONLY
    return inspect.Parameter(p.name, kind, default=default, annotation=Annotated[base, info])


def _typer_function(fn: Callable[..., int], wrap: Callable[[int], None]) -> Callable[..., None]:
    """A function typer can read: ``fn``'s parameters as typer's, its exit code to ``wrap``."""

    def run(**kwargs: Any) -> None:
        wrap(console.guarded(lambda: fn(**kwargs)))

    parameters = [_typer_parameter(p) for p in params_of(fn)]
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


def _exit(code: int) -> None:
    raise typer.Exit(code)


def _root_done(code: int) -> None:
    if code:
        raise typer.Exit(code)


app = typer.Typer(
    name="plancc",
    help=commands.root.__doc__,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    add_completion=True,
    # `-h` as `--help`, on the root and every command (click hands it down to each).
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.callback()(_typer_function(commands.root, _root_done))
for _name, _command in COMMANDS.items():
    app.command(_name, cls=_Command)(_typer_function(_command.run, _exit))


def main() -> NoReturn:
    """The command line through typer (``plancc.cli.launch.main`` is the console script)."""
    console.main(app)
