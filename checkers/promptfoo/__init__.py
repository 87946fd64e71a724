"""promptfoo results: the totals recounted and the deterministic assertions re-run.

Model: ``results.py`` (the results file and promptfoo's assertion rules). Checks:
``checks.py`` (promptfoo-stats@1, promptfoo-assert@1).
"""

from .checks import promptfoo_assert, promptfoo_stats

__all__ = ["promptfoo_assert", "promptfoo_stats"]
