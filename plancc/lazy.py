"""``lazy``: ``functools.cached_property`` without the lock Python 3.11 takes per call.

A value worked out on first use and then kept in the instance's ``__dict__``
(so that later reads are plain attribute reads), as ``cached_property`` does.
Python 3.11's also takes a class-wide ``RLock`` on every first use; the check
of a plan of 10,000 warms makes 100,000 first uses (each tensor's bytes, each
stage's consumer group), and the lock was most of their cost. Python 3.12
dropped it; this is the same descriptor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class lazy(Generic[T]):
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
