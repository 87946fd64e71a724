"""Trajectory skeletons (seed 003): what a successful run must pass through, learned from
reference traces.

Model: ``skeleton/`` (``traces``, ``equivalence``, ``model`` in formats 1 and 2,
``learning``, ``graphs``, ``matching``), ``draw.py``
(drawings and summaries of a model). Checks: ``checks.py`` (trajectory-skeleton).
"""
