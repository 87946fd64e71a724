"""The Intent-Router repository's own eval format, judged as its grader judges it (seed 004).

``intent-expectations@1`` was built from the article alone, on cases reconstructed in its
shapes. The repository's ``evals/`` folder is public: its ``cases.yaml``, its grader
``evals/run.py`` and its ``evals/README.md``. This package reads that ``cases.yaml`` as it is
and judges a recorded run the way that grader does, rule for rule; the ``@2`` checkers in
``checkers/intent/expectations.py`` are thin views over it. Nothing of the repository is
copied here: the rules are restated from reading the grader (``check_turn``, ``check``,
``invariant_failures``, ``render_report`` in ``evals/run.py`` at commit 0843d82) and its
README, and every place it knowingly differs from the grader is said where it
happens (search for "grader:").

Vocabulary, as the grader uses it:

- a **case** is one item of ``cases.yaml``: ``id``, ``prompt``, ``mode``, ``fixture``,
  optional follow-up ``turns``, ``expect`` (judged on the last turn), ``expect_turn1`` (on
  the first turn of a multi-turn case) and ``metrics`` (measured, never judged);
- a **record** is what the runner keeps of one run of a case: its ``turns``, each with the
  ``spec`` parsed out of the reply's last ``yaml`` fence (or null), the turn ``status``
  (``ok``, ``no_fence``, ``degraded_output``, ``timeout``, ``harness_error``) and the reply
  ``text``, plus the ``runner_failures`` (``turn1_not_ask``);
- a **failure** is one name the grader appends: an assertion key (``max_asked``), an
  always-checked one (``schema_valid``, ``invariants_ok``, ``evidence_form``,
  ``evidence_valid``, ``triggered``, ``degraded_output``) or an environmental one
  (``timeout``, ``harness_error``, ``turn1_timeout``...). A run passes when it has none.

Pure: loaded data in, values out; malformed input raises ``CheckerInputError``.
"""

from __future__ import annotations

from .evidence import classify_evidence, workspace_files
from .format import EXPECT_KEYS, RepoCase, parse_repo_cases
from .grader import check_run, invariant_failures, schema_validator
from .records import Record, Turn, parse_records, runner_rule
from .suite import RepoCaseResult, summary, threshold

__all__ = [
    "EXPECT_KEYS",
    "Record",
    "RepoCase",
    "RepoCaseResult",
    "Turn",
    "check_run",
    "classify_evidence",
    "invariant_failures",
    "parse_records",
    "parse_repo_cases",
    "runner_rule",
    "schema_validator",
    "summary",
    "threshold",
    "workspace_files",
]
