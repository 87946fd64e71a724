"""Trajectory skeletons (seed 003): what a successful run must pass through, learned from
reference traces.

Model: ``skeleton.py`` (traces, learning, matching, model formats 1 and 2), ``draw.py``
(drawings and summaries of a model). Checks: ``checks.py`` (trajectory-skeleton@1, @2).
"""
