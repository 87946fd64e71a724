"""Intent expectations on recorded agent output (seed 004, "intent-router").

Models: ``cases.py`` (@1's case format and the per-case judgement), ``repo/`` (the
Intent-Router repository's own format, judged as its grader does, for @2: ``format``,
``records``, ``evidence``, ``grader``, ``suite``),
``transcripts.py`` (the runner's persisted transcripts read as runs), ``runs.py`` (where
@2's runs come from, and every case judged on them). Checks: ``expectations.py``
(intent-expectations and suite-threshold, @1 and @2), ``contamination.py``
(contamination@1, @2), ``group_rates.py`` (group-rates@1).
"""
