"""Structured documents (seed 000, "content"): ``structured-equal``.

The comparison itself (``checkers/compare.py``) is shared with the families that compare
documents; this package only declares the checkers.
"""
