"""promptfoo results: the totals recounted and the deterministic assertions re-run.

Model: ``results.py`` (the results file, read strictly), ``assertions.py`` (promptfoo's
assertion rules re-run). Checks:
``checks.py`` (promptfoo-stats@1/@2, promptfoo-assert@1/@2/@3); ``jsregex.py`` (the subset of
JavaScript regular expressions re-run in Python).
"""
