"""fault-report reads a report's test names and statuses as two columns (issue 33).

@2 and @3 read each record into a ``Record`` and judged those; they now read the names
and statuses of records that are plain ``{test, status}`` dicts by C loops, build a
``Record`` only for a failed test, and fall back to reading records one by one (the old
loop) otherwise. @1 reads such records (and their tracebacks, text or null) the same way
into its ``TestRecord`` objects, one by one otherwise. ``_parse_before``,
``_judge_before`` and ``_missing_before`` are the old functions of @2 and @3, the
reference: on many generated reports the new reading gives the same report, the same
judgement and the same missing fields, each expression the checks now read from the
columns equals the one they read from the records, and every version gives the same
verdict whichever way the records were read (the one-by-one reading is the old loop).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.api import CheckerInputError
from checkers.fault_injection import report as module
from checkers.fault_injection.report import (
    JUDGEMENTS,
    SEED_FAULTS,
    SEED_READS,
    SEED_RECORD_READS,
    SHOWN,
    Judgement,
    Record,
    _blocked,
    _fault_judgement,
    _record_problems,
    few_names,
    judge_v2,
    missing_fields,
    parse_report_v2,
    shown_value,
)
from tests.checkers.checker_calls import run


def _parse_before(value: Any) -> tuple[Any, ...]:
    """parse_report_v2 as it was: every record read into a Record, one by one."""
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
    records: list[Record] = []
    if not isinstance(raw_records, list):
        problems.append(
            "report.records: expected a list of {test, status}, observed "
            f"{shown_value(raw_records)}"
        )
        raw_records = []
    for index, raw in enumerate(raw_records):
        if type(raw) is dict or isinstance(raw, Mapping):
            test, status = raw.get("test"), raw.get("status")
            if isinstance(test, str) and test and isinstance(status, str) and status:
                records.append(Record(test, status, raw.get("traceback")))
                continue
        problems.extend(_record_problems(raw, f"report.records[{index}]"))
        if len(problems) >= SHOWN:
            break
    if problems:
        raise CheckerInputError("input.invalid", "; ".join(problems))
    return planned, executed, bool(complete), bool(blocked), str(fault), tuple(records)


def _judge_before(fields: tuple[Any, ...], known: Sequence[str]) -> Judgement:
    """judge_v2 as it was, on the fields ``_parse_before`` gives."""
    planned, executed, complete, blocked, fault, records = fields
    incomplete = []
    if planned <= 0:
        incomplete.append(f"planned is {planned}: nothing was planned")
    if not complete:
        incomplete.append("the runner marked the run not complete")
    if blocked:
        incomplete.append("the runner reports blocked scenarios")
    if executed != planned:
        incomplete.append(f"executed {executed} of {planned} planned")
    if len(records) != executed:
        incomplete.append(f"{len(records)} records for {executed} executed")
    counts = Counter(r.test for r in records)
    duplicates = sorted(name for name, n in counts.items() if n > 1)
    if duplicates:
        incomplete.append(f"duplicate test names: {few_names(duplicates)}")
    if incomplete:
        return Judgement("incomplete", tuple(incomplete))
    others = [r for r in records if r.status not in ("passed", "failed")]
    if others:
        shown = [f"{r.test}: status {r.status!r}" for r in others[:SHOWN]]
        if len(others) > SHOWN:
            shown.append(f"(+{len(others) - SHOWN} more)")
        return Judgement("execution_error_or_skip", tuple(shown))
    any_failed = any(r.status == "failed" for r in records)
    return _fault_judgement(fault, any_failed, set(known))


def _missing_before(value: Any) -> list[str]:
    if not isinstance(value, Mapping):
        return []
    missing = [key for key in SEED_READS if key not in value]
    records = value.get("records")
    if isinstance(records, list):
        for key in SEED_RECORD_READS:
            missing += [
                f"records[{index}].{key}"
                for index, raw in enumerate(records)
                if (type(raw) is dict or isinstance(raw, Mapping)) and key not in raw
            ]
    return missing


NAMES = ["t0", "t1", "t2", "t3", "t4"]
_TRACES = [None, "E   AssertionError: x", ["a", "E   assert 0"], "ConnectionError: refused", 7]
_GOOD = st.fixed_dictionaries(
    {
        "test": st.sampled_from(NAMES),
        "status": st.sampled_from(["passed", "passed", "failed", "error"]),
    },
    optional={"traceback": st.sampled_from(_TRACES), "duration": st.floats()},
)
_ODD = st.fixed_dictionaries(
    {},
    optional={
        "test": st.sampled_from(["t0", "", None, 5]),
        "status": st.sampled_from(["passed", "failed", "", None, 1]),
        "traceback": st.sampled_from(_TRACES),
    },
)
_RECORD = st.one_of(
    _GOOD,
    _GOOD,
    _GOOD,
    _ODD,
    _GOOD.map(MappingProxyType),  # a mapping that is not a dict: read one by one
    st.sampled_from(["t0", 3, None, ["t0", "passed"]]),
)


@st.composite
def reports(draw: st.DrawFn) -> Any:
    # Hypothesis draws 0 more often than other numbers: 0 is the common case here
    shape = draw(st.integers(0, 7))
    records = draw(
        st.lists(_GOOD, max_size=30)
        if shape < 6
        else st.lists(_RECORD, max_size=30)
        if shape == 6
        else st.sampled_from(["x", None])
    )
    if isinstance(records, list) and draw(st.booleans()):  # names unique
        records = [
            {**r, "test": f"t{i}"} if isinstance(r, dict) and "test" in r else r
            for i, r in enumerate(records)
        ]
    size = len(records) if isinstance(records, list) else 0
    count = st.one_of(st.just(size), st.integers(-1, 8))
    fields = {
        "fault": st.sampled_from(["none", "missing-record", "double-reserve", "other"]),
        "planned": count,
        "executed": count,
        "complete": st.sampled_from([True, True, True, False]),
        "blocked": st.sampled_from([None, False, False, True, 0, 2, [], ["a"], {}]),
    }
    odd = ["false", 3, "3", True, 2.0]  # what no field takes as it stands
    report = {"records": records}
    for key, values in fields.items():
        chance = draw(st.integers(0, 39))
        if chance < 39:  # mostly present, and rarely of a type the field does not take
            report[key] = draw(values) if chance < 38 else draw(st.sampled_from(odd))
    if draw(st.integers(0, 3)) < 3:  # planned and executed as many as the records
        report["planned"] = report["executed"] = size
    return report


def _parsed(value: Any) -> Any:
    try:
        report = parse_report_v2(value)
    except CheckerInputError as exc:
        return f"raised {exc.code}: {exc.message}"
    fields = (report.planned, report.executed, report.complete, report.blocked, report.fault)
    return (*fields, report.records)


@settings(max_examples=500, deadline=None)
@given(reports())
def test_the_columns_give_the_report_the_judgement_and_the_missing_fields_as_before(
    value: Any,
) -> None:
    try:
        before: Any = _parse_before(value)
    except CheckerInputError as exc:
        before = f"raised {exc.code}: {exc.message}"
    assert _parsed(value) == before
    assert missing_fields(value) == _missing_before(value)
    if isinstance(before, str):
        return
    report = parse_report_v2(value)
    records = before[-1]
    # what the checks now read from the columns, against what they read from the records
    assert report.records == records
    assert report.failed == [r for r in records if r.status == "failed"]
    assert report.statuses.count("passed") == sum(r.status == "passed" for r in records)
    assert dict(zip(report.tests, report.statuses, strict=True)) == {
        r.test: r.status for r in records
    }
    assert set(report.tests) == {r.test for r in records}
    for known in (SEED_FAULTS, ["other"]):
        assert judge_v2(report, known) == _judge_before(before, known)


@st.composite
def params_for(draw: st.DrawFn, value: Any) -> dict[str, Any]:
    """Params for a report: mostly valid, naming its tests (some of them refused)."""
    records = value["records"] if isinstance(value["records"], list) else []
    held = {r.get("test") for r in records if isinstance(r, dict)}
    names = sorted(n for n in held if isinstance(n, str) and n) or NAMES
    some = st.lists(st.sampled_from([*names, "t99"]), unique=True, max_size=4)
    params: dict[str, Any] = {"want": draw(st.sampled_from(JUDGEMENTS))}
    if draw(st.booleans()):
        params["planned"] = draw(st.sampled_from([None, len(records) or 1, 1]))
    if draw(st.booleans()):
        params["scenarios"] = draw(st.one_of(st.just(names), some))
    if draw(st.booleans()):
        params["expected_failures"] = draw(
            st.dictionaries(st.sampled_from(["none", "missing-record", "other"]), st.integers(0, 3))
        )
    params["assertion_failures"] = draw(st.booleans())
    if params["want"] in ("defect_detected", "baseline_fail") or draw(st.integers(0, 39)) == 39:
        failing = draw(some)
        params["failing_tests"] = failing
        params["failure_causes"] = draw(
            st.dictionaries(
                st.sampled_from(failing or names), st.sampled_from(["AssertionError", "x"])
            )
        )
    return params


@settings(max_examples=600, deadline=None)
@given(
    st.data(), reports(), st.sampled_from(["fault-report@1", "fault-report@2", "fault-report@3"])
)
def test_every_version_gives_the_verdict_reading_records_one_by_one_gave(
    data: st.DataObject, value: Any, key: str
) -> None:
    params = data.draw(params_for(value))
    if key == "fault-report@1":
        params = {k: v for k, v in params.items() if k in _V1_PARAMS}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "_columns", lambda records: None)  # every record one by one
        one_by_one = _verdict(key, value, params)
    assert _verdict(key, value, params) == one_by_one


_V1_PARAMS = ("want", "failing_tests", "failure_causes", "known_faults")


def _verdict(key: str, value: Any, params: dict[str, Any]) -> str:
    try:
        return repr(run(key, {"report": value}, **params))
    except CheckerInputError as exc:  # params refused
        return f"raised {exc.code}: {exc.message}"


def test_a_report_builds_a_record_only_for_each_failed_test(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = []

    class Counted(Record):
        def __new__(cls, *fields: Any) -> Counted:
            built.append(fields[0])
            return super().__new__(cls, *fields)

    monkeypatch.setattr(module, "Record", Counted)
    records = [{"test": f"t{i}", "status": "passed"} for i in range(500)]
    records[7] = {"test": "t7", "status": "failed", "traceback": "E   AssertionError: x"}
    value = {
        "fault": "missing-record",
        "planned": 500,
        "executed": 500,
        "complete": True,
        "blocked": None,
        "records": records,
    }
    for key in ("fault-report@2", "fault-report@3"):
        verdict = run(key, {"report": value}, want="defect_detected", assertion_failures=True)
        assert verdict.status == "pass", verdict.message
    assert built == ["t7", "t7"]  # before: a Record for each of the 500 records, each time
