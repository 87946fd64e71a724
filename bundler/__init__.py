"""reprobundle: build and verify reproducibility bundles.

A program uses the library modules directly: ``bundler.authoring.build.build`` and
``bundler.run.verify.verify`` (with ``bundler.reports.document.to_json`` for the report),
``bundler.signatures.signfile.sign_bundle``, ``bundler.store.Archive``. The CLI
(``bundler.cli``) is a thin shell over them. Nothing in this package prints.
"""

__version__ = "0.1.0"
