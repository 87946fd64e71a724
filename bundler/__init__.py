"""reprobundle: build and verify reproducibility bundles.

The public API re-exports the few things a program needs; the CLI is a thin shell
over it. Nothing in this package prints.
"""

__version__ = "0.1.0"
