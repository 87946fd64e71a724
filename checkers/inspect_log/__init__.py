"""Inspect AI eval logs: the header's figures re-derived from the log's own samples.

Models: ``log.py`` (a log read from its bytes, without inspect-ai), ``rules.py`` (Inspect's
reducers, metrics and deterministic scorers). Checks: ``checks.py`` (inspect-metric,
inspect-counts, inspect-status, inspect-rescore: @1 trusts the params, @2 reads the header).
"""

from .metric import (
    inspect_counts,
    inspect_counts_v2,
    inspect_metric,
    inspect_metric_v2,
    inspect_rescore,
    inspect_rescore_v2,
    inspect_status,
    inspect_status_v2,
)

__all__ = [
    "inspect_counts",
    "inspect_counts_v2",
    "inspect_metric",
    "inspect_metric_v2",
    "inspect_rescore",
    "inspect_rescore_v2",
    "inspect_status",
    "inspect_status_v2",
]
