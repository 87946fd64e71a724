"""Structured documents (seed 000, "content"): ``structured-equal@1``.

The comparison itself (``checkers/compare.py``) is shared with the families that compare
documents; this package only declares the checker.
"""

from .checks import structured_equal

__all__ = ["structured_equal"]
