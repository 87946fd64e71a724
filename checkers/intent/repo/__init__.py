"""The Intent-Router repository's own eval format, judged as its grader judges it (in
``grader`` until it is split along its seams)."""

from .grader import (
    EXPECT_KEYS,
    CaseResult,
    Record,
    RepoCase,
    Turn,
    check_run,
    classify_evidence,
    invariant_failures,
    parse_cases,
    parse_outputs,
    runner_rule,
    schema_validator,
    summary,
    threshold,
    workspace_files,
)

__all__ = [
    "EXPECT_KEYS",
    "CaseResult",
    "Record",
    "RepoCase",
    "Turn",
    "check_run",
    "classify_evidence",
    "invariant_failures",
    "parse_cases",
    "parse_outputs",
    "runner_rule",
    "schema_validator",
    "summary",
    "threshold",
    "workspace_files",
]
