"""Fault injection (seed 001): one runner report's judgement, and repeated-trial figures.

Models: ``report.py`` (a runner report and the judgement it earns), ``trials.py`` (trial
records and the figures they support). Checks: ``fault_report.py`` (fault-report@1, @2,
@3), ``trial_stats.py`` (trial-stats@1, @2, @3). An execution error never counts as a detection,
and repeats of one task are never counted as many tasks.
"""

from .fault_report import fault_report, fault_report_v2, fault_report_v3
from .trial_stats import trial_stats, trial_stats_v2, trial_stats_v3

__all__ = [
    "fault_report",
    "fault_report_v2",
    "fault_report_v3",
    "trial_stats",
    "trial_stats_v2",
    "trial_stats_v3",
]
