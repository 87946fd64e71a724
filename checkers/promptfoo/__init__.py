"""promptfoo results: the totals recounted and the deterministic assertions re-run.

Model: ``results.py`` (the results file, read strictly), ``assertions.py`` (promptfoo's
assertion rules re-run). Checks:
``checks.py`` (promptfoo-stats, promptfoo-assert); ``jsregex.py`` (the subset of
JavaScript regular expressions re-run in Python).
"""
