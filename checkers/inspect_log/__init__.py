"""Inspect AI eval logs: the header's figures re-derived from the log's own samples.

Models: ``log.py`` (a log read from its bytes, without inspect-ai), ``rules.py`` (Inspect's
reducers, metrics and deterministic scorers). Checks: ``checks.py`` (inspect-metric@1,
inspect-counts@1, inspect-status@1, inspect-rescore@1).
"""

from .checks import inspect_counts, inspect_metric, inspect_rescore, inspect_status

__all__ = ["inspect_counts", "inspect_metric", "inspect_rescore", "inspect_status"]
