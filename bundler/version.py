"""reprobundle's version, written here only: ``bundler.__version__`` re-exports it and
the distribution's metadata reads it (``pyproject.toml``, ``[tool.setuptools.dynamic]``).
It imports nothing, so every layer may import it."""

__version__ = "0.1.0"
