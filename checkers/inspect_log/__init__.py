"""Inspect AI eval logs: the header's figures re-derived from the log's own samples.

Models: ``log.py`` (a log read from its bytes, without inspect-ai), ``rules.py`` (Inspect's
reducers, metrics and deterministic scorers). Checks, one module per checker, each with
its @1 (trusts the params) and @2 (reads the header): ``metric.py`` (inspect-metric),
``counts.py`` (inspect-counts), ``status.py`` (inspect-status), ``rescore.py``
(inspect-rescore); ``inputs.py`` holds the log role they share. inspect-counts has an @3
(the header against the plan and the records, for finished and unfinished runs alike).
"""
