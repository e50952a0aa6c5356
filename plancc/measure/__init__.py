"""`plancc measure`: the seed's "Measuring a warm" procedure, computed from PyPTO's outputs.

Benchmark logs give wall time and the verdict (``logs``, ``wall``, ``verdict``);
swimlane traces give each warm scope's duration and bandwidth (``trace``,
``scopes``); ``[STRACE]`` slot lines give stage windows (``slots``). ``report``
assembles one JSON-shaped result (``schemas/measure.schema.json``), which
``text`` and ``markdown`` print. Bad input raises ``InputError`` (exit 2).
"""
