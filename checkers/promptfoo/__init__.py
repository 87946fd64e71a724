"""promptfoo results: the totals recounted and the deterministic assertions re-run.

Model: ``results.py`` (the results file, read strictly), ``assertions.py`` (promptfoo's
assertion rules re-run). Checks:
``checks.py`` (promptfoo-stats@1/@2, promptfoo-assert@1/@2); ``jsregex.py`` (the subset of
JavaScript regular expressions re-run in Python).
"""

from .checks import promptfoo_assert, promptfoo_assert_v2, promptfoo_stats, promptfoo_stats_v2

__all__ = ["promptfoo_assert", "promptfoo_assert_v2", "promptfoo_stats", "promptfoo_stats_v2"]
