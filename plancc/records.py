"""The frozen records the pipeline builds by the hundred thousand, built fast.

A plan of 10,000 warms makes 70,000 IR records (stages, warms, tensors, views)
and asks 100,000 derived values of them. Two costs of Python 3.11 dominate
that, and each has a drop-in replacement here:

- ``fast_init``: a frozen dataclass's ``__init__`` sets each field through
  ``object.__setattr__`` (4 µs for a stage of 10 fields). This one writes the
  instance's ``__dict__`` directly (1 µs). The class stays a frozen dataclass:
  the same fields, defaults, equality, hash, ``replace`` and read-only
  attributes; only its constructor is replaced.
- ``lazy``: ``functools.cached_property`` takes a class-wide lock on each first
  use in 3.11 (3.12 dropped it). ``lazy`` is the same descriptor without it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
C = TypeVar("C", bound=type)


def fast_init(cls: C) -> C:
    """``cls``, a frozen dataclass of plain fields, with an ``__init__`` that writes its
    ``__dict__`` (the fields are this package's own names, never a plan's)."""
    params = dataclasses.fields(cls)
    assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert not hasattr(cls, "__post_init__")  # nothing runs after the fields are set
    assert "__slots__" not in vars(cls)  # the fields live in __dict__
    defaults: dict[str, Any] = {}
    signature = []
    for f in params:
        assert f.init
        assert f.default_factory is dataclasses.MISSING
        assert not f.kw_only
        if f.default is dataclasses.MISSING:
            signature.append(f.name)
        else:
            defaults[f"_default_{f.name}"] = f.default
            signature.append(f"{f.name}=_default_{f.name}")
    body = "".join(f"    d[{f.name!r}] = {f.name}\n" for f in params)
    source = f"def __init__(self, {', '.join(signature)}):\n    d = self.__dict__\n{body}"
    exec(source, defaults)  # as dataclasses writes its own __init__
    init = defaults["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[misc]
    return cls


class lazy(Generic[T]):  # lower case: a decorator, named like cached_property
    """A value worked out on first use and then kept in the instance's ``__dict__``
    (later reads are plain attribute reads), as ``cached_property`` does."""

    def __init__(self, make: Callable[[Any], T]) -> None:
        self.make = make
        self.name = make.__name__
        self.__doc__ = make.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> lazy[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> T | lazy[T]:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.make(instance)
        return value
