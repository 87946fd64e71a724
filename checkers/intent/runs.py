"""Where the @2 runs come from, and every case judged on them.

The runs are the runner's records (``outputs``) or its persisted transcripts, read by
:mod:`checkers.intent.transcripts`; the cases and records are
:mod:`checkers.intent.repo`'s.
"""

from __future__ import annotations

from typing import Any

from .cases import input_invalid
from .repo import (
    Record,
    RepoCaseResult,
    check_run,
    parse_records,
    parse_repo_cases,
    runner_rule,
    schema_validator,
    workspace_files,
)
from .transcripts import transcript_runs


def judge(
    cases_doc: Any,
    outputs_doc: Any,
    tree: Any,
    schema: Any,
    *,
    only: str = "",
    transcripts: Any = None,
) -> list[RepoCaseResult]:
    """Parse the inputs and judge every case of the file (or only the case ``only``).

    The runs come from the records (``outputs_doc``) or from the runner's persisted
    transcripts (``transcripts``), exactly one of them. With records, every judged case
    needs an entry (null when it was not run): a case left out is an input error, never
    a silent not-run. With transcripts, as ``--rescore``, a case with no transcript was
    not run.
    """
    cases = parse_repo_cases(cases_doc)
    validator = schema_validator(schema)
    if (outputs_doc is None) == (transcripts is None):
        raise input_invalid("give the runs either as outputs (records) or as transcripts, not both")
    if transcripts is not None:
        by_id = {c.id: c for c in cases}
        found = transcript_runs(transcripts, cases)
        outputs: dict[str, list[Record] | None] = {c.id: None for c in cases}
        for cid, runs in found.items():
            outputs[cid] = [
                runner_rule(tuple(turns), by_id[cid], None, f"transcripts/{cid}-{i + 1}")
                for i, turns in enumerate(runs)
            ]
    else:
        outputs = parse_records(outputs_doc, cases)
    if only:
        cases = [c for c in cases if c.id == only]
        if not cases:
            raise input_invalid(f"case {only!r} is not in cases.yaml")
    missing = [c.id for c in cases if c.id not in outputs]
    if missing:
        raise input_invalid(f"outputs: no entry for case(s) {missing} (null marks a case not run)")
    results = []
    for case in cases:
        records = outputs[case.id]
        if records is None:
            results.append(RepoCaseResult(case, None))
            continue
        files = workspace_files(tree, case.fixture)
        results.append(
            RepoCaseResult(case, [check_run(case, r, validator, files) for r in records])
        )
    return results
