"""PyPTO model code, read with Python's ``ast`` alone (never imported, never run).

``reader`` turns a layer function and the ``@pl.jit.inline`` helpers it calls into
a ``Reading``: its kernels in program order, the tasks, reads, writes and deps of
each, its annotated parameters, the warms already in the code, and what it could
not resolve. ``checks`` compares a plan with the readings of its layer kinds
(PC200-PC208); ``extract`` prints the plan skeleton of one. docs/sources.md.
"""
