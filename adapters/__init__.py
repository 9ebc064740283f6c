"""Framework adapters, installed as ``conformance.adapters``.

Importing this package or any adapter module imports no framework; each adapter imports
its framework on first use.
"""
