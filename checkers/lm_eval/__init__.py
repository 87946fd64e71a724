"""lm-evaluation-harness runs: headline figures, sample counts and stored hashes re-derived
from the run's own samples.

Model: ``run.py`` (the results and samples files, and lm-eval's rules). Checks:
``checks.py`` (lm-eval-metric, lm-eval-counts, lm-eval-hashes).
"""
