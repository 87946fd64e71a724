"""Fault injection (seed 001): one runner report's judgement, and repeated-trial figures.

Models: ``report.py`` (a runner report and the judgement it earns), ``trials.py`` (trial
records and the figures they support). Checks: ``fault_report.py`` (fault-report),
``trial_stats.py`` (trial-stats). An execution error never counts as a detection,
and repeats of one task are never counted as many tasks.
"""
