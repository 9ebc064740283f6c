"""YAML values that keep where they were written: libyaml's events read into mappings, lists
and scalars that carry their file, line and column (``yamlsrc``), a syntax error's mistake
and its fix (``yamlerrors``), and the typed reads of those values every reader of case text
shares (``fields``). Below the assertion kinds and the case reader, which both read them."""
