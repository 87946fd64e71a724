"""reprobundle: build and verify reproducibility bundles.

A program uses the library modules directly: ``bundler.build.build`` and
``bundler.verify.verify`` (with ``bundler.report.to_json`` for the report),
``bundler.signfile.sign_bundle``, ``bundler.archive.Archive``. The CLI
(``bundler.cli``) is a thin shell over them. Nothing in this package prints.
"""

__version__ = "0.1.0"
