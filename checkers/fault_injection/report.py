"""A fault-injection runner report (seed 001), as @1 and as @2 read it, and the judgement it earns.

An execution error never counts as a detection: a fault is detected only by a test that
ran and failed, and the baseline must pass.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress, count, repeat
from operator import contains, eq
from typing import Any, NamedTuple

from ..api import (
    CheckerInputError,
    Reading,
)
from ..plain import brief, few

JUDGEMENTS = (
    "incomplete",
    "execution_error_or_skip",
    "baseline_pass",
    "baseline_fail",
    "defect_detected",
    "defect_missed",
    "unknown_fault",
)
# The faults the seed's reference replay injects (ai-test-workflow, `python workflow.py demo`).
SEED_FAULTS = ("reject-writes", "double-reserve", "missing-record")
BASELINE_FAULT = "none"
# Judgements where some tests failed on an assertion, so "which tests" is a fair question.
WITH_FAILURES = ("defect_detected", "baseline_fail")


@dataclass(frozen=True)
class TestRecord:
    """One scenario's result in a runner report."""

    test: str
    status: str
    traceback: str | None = None


@dataclass(frozen=True)
class RunnerReport:
    """The fields of a runner report the judgement reads (other fields are ignored)."""

    planned: int
    executed: int
    complete: bool
    blocked: bool
    fault: str
    records: tuple[TestRecord, ...]

    @property
    def failed_tests(self) -> list[str]:
        return [r.test for r in self.records if r.status == "failed"]


@dataclass(frozen=True)
class Judgement:
    """What a report earns, and why (``problems`` explains incomplete / error judgements)."""

    name: str
    problems: tuple[str, ...] = field(default=())


def parse_report(value: Any) -> RunnerReport:
    """Check a loaded report against the documented shape, collecting every problem."""
    if not isinstance(value, Mapping):
        raise CheckerInputError(
            "input.invalid", f"report: expected a mapping, observed {type(value).__name__}"
        )
    problems: list[str] = []

    def field_of(key: str, kinds: tuple[type, ...], label: str) -> Any:
        if key not in value:
            problems.append(f"report.{key}: missing (expected {label})")
            return None
        item = value[key]
        # bool is an int in Python; a count must not be true/false.
        if not isinstance(item, kinds) or (bool not in kinds and isinstance(item, bool)):
            problems.append(f"report.{key}: expected {label}, observed {shown_value(item)}")
            return None
        return item

    planned = field_of("planned", (int,), "an integer")
    executed = field_of("executed", (int,), "an integer")
    complete = field_of("complete", (bool,), "true or false")
    blocked_raw = field_of(
        "blocked", (bool, int, list), "true/false, a count or a list of blocked items"
    )
    fault = field_of("fault", (str,), 'a fault name or "none"')
    raw_records = field_of("records", (list,), "a list of {test, status, traceback?}")
    records = _test_records(raw_records or [])
    if records is None:  # some record is not a plain one: each looked at, every problem named
        records = _test_records_one_by_one(raw_records or [], problems)
    if problems:
        raise CheckerInputError("input.invalid", "; ".join(problems))
    return RunnerReport(
        planned=planned,
        executed=executed,
        complete=complete,
        blocked=bool(blocked_raw),
        fault=fault,
        records=tuple(records),
    )


def _test_records(rows: list[Any]) -> list[TestRecord] | None:
    """@1's records when every one is a dict with non-empty text for test and status and
    text or null for traceback, read by C loops; None otherwise."""
    columns = _columns(rows)
    if columns is None:
        return None
    traces = list(map(dict.get, rows, repeat("traceback")))
    if not set(map(type, traces)) <= _TRACE:
        return None
    return list(map(TestRecord, *columns, traces))


_TRACE = frozenset({str, type(None)})


def _test_records_one_by_one(rows: list[Any], problems: list[str]) -> list[TestRecord]:
    records: list[TestRecord] = []
    for index, raw in enumerate(rows):
        where = f"report.records[{index}]"
        if not isinstance(raw, Mapping):
            problems.append(f"{where}: expected a mapping, observed {shown_value(raw)}")
            continue
        test, status, trace = raw.get("test"), raw.get("status"), raw.get("traceback")
        if not isinstance(test, str) or not test:
            problems.append(f"{where}.test: expected a test name, observed {shown_value(test)}")
        if not isinstance(status, str) or not status:
            problems.append(f"{where}.status: expected a status, observed {shown_value(status)}")
        if trace is not None and not isinstance(trace, str):
            problems.append(
                f"{where}.traceback: expected text or null, observed {shown_value(trace)}"
            )
        if isinstance(test, str) and isinstance(status, str):
            records.append(TestRecord(test, status, trace if isinstance(trace, str) else None))
    return records


def judge(report: RunnerReport, known_faults: Sequence[str] = SEED_FAULTS) -> Judgement:
    """The seed's judgement, in the seed's order: completeness first, then execution
    errors, then what the statuses mean for the injected fault."""
    incomplete = _incomplete(report, len(report.records))
    counts = Counter(r.test for r in report.records)  # names.count per name was quadratic
    duplicates = sorted(name for name, n in counts.items() if n > 1)
    if duplicates:
        incomplete.append(f"duplicate test names: {', '.join(duplicates)}")
    if incomplete:
        return Judgement("incomplete", tuple(incomplete))

    others = [r for r in report.records if r.status not in ("passed", "failed")]
    if others:
        return Judgement(
            "execution_error_or_skip",
            tuple(f"{r.test}: status {r.status!r}" for r in others),
        )
    return _fault_judgement(report.fault, bool(report.failed_tests), set(known_faults))


def _incomplete(report: RunnerReport | Report, records: int) -> list[str]:
    """Why a report of ``records`` records does not show a complete run (@1 and @2
    alike); empty if it does."""
    incomplete: list[str] = []
    if report.planned <= 0:
        incomplete.append(f"planned is {report.planned}: nothing was planned")
    if not report.complete:
        incomplete.append("the runner marked the run not complete")
    if report.blocked:
        incomplete.append("the runner reports blocked scenarios")
    if report.executed != report.planned:
        incomplete.append(f"executed {report.executed} of {report.planned} planned")
    if records != report.executed:
        incomplete.append(f"{records} records for {report.executed} executed")
    return incomplete


def _fault_judgement(fault: str, any_failed: bool, known: set[str]) -> Judgement:
    """What the statuses of a complete run without execution errors mean for its fault."""
    if fault == BASELINE_FAULT:
        return Judgement("baseline_fail" if any_failed else "baseline_pass")
    if fault in known:
        return Judgement("defect_detected" if any_failed else "defect_missed")
    return Judgement("unknown_fault")


LENIENT = Reading(yaml_aliases=True, json_constants=True)
SHOWN = 20  # names listed in a message or in details before "(+N more)"


def few_names(names: Sequence[str]) -> str:
    return few(names, SHOWN)


def shown_value(value: Any) -> str:
    return brief(value, 80)


class Record(NamedTuple):
    """One scenario's result; ``traceback`` is kept as written and read only when asked.
    (A tuple: a report may hold hundreds of thousands.)"""

    test: str
    status: str
    traceback: Any = None


@dataclass(frozen=True)
class Report:
    """A report as @2 reads it: the records' names and statuses as two columns (a report
    may hold hundreds of thousands of records), each record as written in ``rows``, read
    again only for a failed test's traceback."""

    planned: int
    executed: int
    complete: bool
    blocked: bool
    fault: str
    tests: list[str]
    statuses: list[str]
    rows: Sequence[Mapping[str, Any]]

    @cached_property
    def failed(self) -> list[Record]:
        at = compress(count(), map(eq, self.statuses, repeat("failed")))
        return [Record(self.tests[i], self.statuses[i], self.rows[i].get("traceback")) for i in at]

    @property
    def records(self) -> tuple[Record, ...]:
        """Every record (built on demand: the checks read the columns)."""
        return tuple(
            Record(test, status, row.get("traceback"))
            for test, status, row in zip(self.tests, self.statuses, self.rows, strict=True)
        )


def _blocked(value: Any) -> bool | None:
    """The seed's ``if report["blocked"]``, for the values whose truth is not in doubt:
    null, booleans, counts, lists and mappings. None for text (the seed reads "false" as
    blocked) and other values: refused."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, list | Mapping):
        return bool(value)
    return None


def parse_report_v2(value: Any) -> Report:
    """The fields the judgement reads, checked; every other field (durations, metadata,
    tracebacks until a pin asks for them) is ignored whatever it holds."""
    if not isinstance(value, Mapping):
        raise CheckerInputError(
            "input.invalid", f"report: expected a mapping, observed {shown_value(value)}"
        )
    problems: list[str] = []

    def count(key: str) -> int:
        item = value.get(key)
        if key not in value:
            problems.append(f"report.{key}: missing (expected an integer)")
        elif not isinstance(item, int) or isinstance(item, bool):
            problems.append(f"report.{key}: expected an integer, observed {shown_value(item)}")
        else:
            return item
        return 0

    planned, executed = count("planned"), count("executed")
    complete = value.get("complete")
    if not isinstance(complete, bool):
        # Stricter than the seed's judge_v2, which reads the text "false" as complete.
        problems.append(
            f"report.complete: expected true or false, observed {shown_value(complete)}"
        )
    blocked = _blocked(value.get("blocked"))
    if blocked is None:
        problems.append(
            "report.blocked: expected null, true/false, a count, a list or a mapping of "
            f"blocked items, observed {shown_value(value.get('blocked'))}"
        )
    fault = value.get("fault")
    if not isinstance(fault, str):
        problems.append(
            f'report.fault: expected a fault name or "none", observed {shown_value(fault)}'
        )
    raw_records = value.get("records")
    if not isinstance(raw_records, list):
        problems.append(
            "report.records: expected a list of {test, status}, observed "
            f"{shown_value(raw_records)}"
        )
        raw_records = []
    columns = _columns(raw_records)
    if columns is None:  # some record is not a plain {test, status}: each one looked at
        records: list[Record] = []
        append = records.append
        for index, raw in enumerate(raw_records):
            if type(raw) is dict or isinstance(raw, Mapping):
                test, status = raw.get("test"), raw.get("status")
                if isinstance(test, str) and test and isinstance(status, str) and status:
                    append(Record(test, status, raw.get("traceback")))
                    continue
            problems.extend(_record_problems(raw, f"report.records[{index}]"))
            if len(problems) >= SHOWN:
                break
        columns = [r.test for r in records], [r.status for r in records]
    if problems:
        raise CheckerInputError("input.invalid", "; ".join(problems))
    tests, statuses = columns
    return Report(
        planned, executed, bool(complete), bool(blocked), str(fault), tests, statuses, raw_records
    )


def _columns(records: list[Any]) -> tuple[list[str], list[str]] | None:
    """The test names and statuses of records that are all dicts with non-empty text in
    both, read by C loops; None otherwise (the records are then read one by one)."""
    if not set(map(type, records)) <= _DICT:
        return None
    tests: list[Any] = list(map(dict.get, records, repeat("test")))
    statuses: list[Any] = list(map(dict.get, records, repeat("status")))
    for column in (tests, statuses):
        if not set(map(type, column)) <= _TEXT or not all(column):
            return None
    return tests, statuses


_DICT = frozenset({dict})
_TEXT = frozenset({str})


def _record_problems(raw: Any, where: str) -> list[str]:
    if not isinstance(raw, Mapping):
        return [f"{where}: expected a mapping, observed {shown_value(raw)}"]
    test, status = raw.get("test"), raw.get("status")
    problems = []
    if not isinstance(test, str) or not test:
        problems.append(f"{where}.test: expected a test name, observed {shown_value(test)}")
    if not isinstance(status, str) or not status:
        problems.append(f"{where}.status: expected a status, observed {shown_value(status)}")
    return problems


def judge_v2(report: Report, known_faults: Sequence[str] = SEED_FAULTS) -> Judgement:
    """The seed's judgement in the seed's order, in time linear in the number of records."""
    tests, statuses = report.tests, report.statuses
    incomplete = _incomplete(report, len(tests))
    if len(set(tests)) < len(tests):
        duplicates = sorted(name for name, n in Counter(tests).items() if n > 1)
        incomplete.append(f"duplicate test names: {few_names(duplicates)}")
    if incomplete:
        return Judgement("incomplete", tuple(incomplete))
    if not set(statuses) <= _RAN:
        others = [i for i, status in enumerate(statuses) if status not in _RAN]
        shown = [f"{tests[i]}: status {statuses[i]!r}" for i in others[:SHOWN]]
        if len(others) > SHOWN:
            shown.append(f"(+{len(others) - SHOWN} more)")
        return Judgement("execution_error_or_skip", tuple(shown))
    return _fault_judgement(report.fault, "failed" in statuses, set(known_faults))


_RAN = frozenset({"passed", "failed"})


def traceback_text(record: Record, why: str) -> str:
    """A failed test's traceback as text, for a pin that reads it: text, or a list of
    lines (joined). Anything else is refused here, and only here."""
    value = record.traceback
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value)
    raise CheckerInputError(
        "input.invalid",
        f"{record.test}: {why} reads its traceback, which is {shown_value(value)}; expected text "
        "or a list of lines",
    )


# The exception a traceback ends in: pytest's location line ("tests/x.py:60: ConnectionError"),
# an "E   Name: message" line, or a final "Name: message" line as the stdlib prints it.
_LOCATION = re.compile(r"^\S+:\d+: ([A-Za-z_][\w.]*)\s*$")
_RAISED = re.compile(
    r"^(?:E\s+)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failed))(?::|\s*$)"
)
_PYTEST_ASSERT = re.compile(r"^E\s+assert\b")


def failure_type(traceback: str) -> str | None:
    """The name of the exception a failed test's traceback ends in (``AssertionError`` for
    pytest's rewritten ``E   assert ...``), or None when it names none."""
    found: str | None = None
    for line in traceback.splitlines():
        line = line.rstrip()
        match = _LOCATION.match(line) or _RAISED.match(line)
        if match:
            found = match.group(1).rsplit(".", 1)[-1]
        elif _PYTEST_ASSERT.match(line) and found is None:
            found = "AssertionError"
    return found


# The fields the seed's judge reads (check_reports.py in the article), in the order it
# reads them: ``print(report["fault"], judge(report))`` reads the fault first, then
# ``judge`` the records and the counts (an ``or`` chain: each read only when the ones
# before did not already make the report incomplete), then every record's test name,
# then every record's status. What it reads on one path is a prefix of this order.
SEED_READS = ("fault", "records", "planned", "complete", "blocked", "executed")
SEED_RECORD_READS = ("test", "status")


def missing_fields(value: Any) -> list[str]:
    """The fields the seed's judge reads that ``value`` lacks, in the seed's order
    (``records[3].test`` for a record's field). The seed's judge raises on the first one
    its path reaches; a report that lacks one is outside what the judgement is defined
    on, whether or not a shorter path would skip it. A value of the wrong shape (not a
    mapping, records not a list) is left to the parser, which names it."""
    if not isinstance(value, Mapping):
        return []
    missing = [key for key in SEED_READS if key not in value]
    records = value.get("records")
    if isinstance(records, list):
        dicts = set(map(type, records)) <= _DICT
        for key in SEED_RECORD_READS:
            if dicts and all(map(contains, records, repeat(key))):
                continue  # every record holds it (checked in C)
            missing += [
                f"records[{index}].{key}"
                for index, raw in enumerate(records)
                if (type(raw) is dict or isinstance(raw, Mapping)) and key not in raw
            ]
    return missing
