"""The domain's tables: dtypes, platforms, the names plancc gives its outputs, the rules
of a name, and the files that ship with plancc (schemas, templates)."""
