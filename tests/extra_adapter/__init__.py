"""An example third-party adapter package, used by tests/test_extra_adapter.py.

``tinytensor`` stands in for a framework: a toy tensor type over NumPy arrays.
``minimal`` is its conformance adapter (framework name ``minimal``), registered through the
``conformance.adapters`` entry point group by a ``*.dist-info`` the test writes. See
docs/adapters.md. Importing this package imports neither module.
"""
