"""plancc: a compiler for declarative L2 warm plans (PyPTO SDMA prefetch)."""

__version__ = "0.1.0"
