"""trial-stats@1, @2 and @3 give the same verdict when they tally the records in one pass
as when they read them record by record (issue 33, item 3).

The readers of ``trials.py`` check every record, collect every problem and group the
trials by task (a dataclass and a few containers a record, each configuration written as
JSON once a record): four times the time of parsing the file. ``tally.py`` takes a file
whose records are all well formed and in order in one pass, and gives up at the first
record it cannot take as it is; the readers then read the file as before. Here each
generated file is judged both ways (the tally switched off is the old path, the
reference): the same status, message, reasons and details, or the same error.
"""

from __future__ import annotations

import math
from typing import Any
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st

from checkers.api import CheckerInputError
from checkers.fault_injection import tally
from checkers.fault_injection.trials import OUTCOMES
from tests.checkers.checker_calls import full_params, get

_CONFIGS = [
    {"model": "a", "t": 0.8},
    {"t": 0.8, "model": "a"},  # the same configuration, keys in another order
    {"model": "a", "t": 1},
    {"model": "a", "t": 1.0},
    {"model": "a", "t": True},
    {"model": "a", "t": math.nan},
    {"model": "a", "t": "nan"},
    {"model": "a", "t": -0.0},
    {"model": "a", "t": 0.0},
    {"model": "b", "t": [1, {"x": None}]},
    {},
    None,
    [1, 2],
    "text",
]
_OUTCOMES = [
    "success",
    "failure",
    "environment_failure",
    "passed",
    "failed",
    "failed: AssertionError: 1 != 2",
    "timed out",
    True,
    False,
    1,
    None,
    "",
]
# how a record's sample number strays from the next one of its task, now and then
_STRAYS = [None] * 8 + ["skip", "repeat", "zero", "bool", "text", "missing", "back"]
_TASKS = ["t-a", "t-b", "t-c", "t-a", "t-b", "", 7, None]


@st.composite
def _files(draw: st.DrawFn) -> tuple[list[tuple[int, Any]], dict[str, Any]]:
    first = draw(st.sampled_from([0, 1]))
    renamed = draw(st.booleans())
    fields = {"task": "task_id", "sample": "n", "outcome": "result", "config": "setup"}
    if not renamed:
        fields = {"task": "task", "sample": "trial", "outcome": "outcome", "config": "config"}
    if draw(st.booleans()):
        fields["sample"] = ""
    config_field = draw(st.sampled_from([fields["config"], fields["config"], ""]))
    fields["config"] = config_field
    shared = draw(st.sampled_from(_CONFIGS[:10]))
    records: list[Any] = []
    if draw(st.integers(0, 4)) == 0:  # a header line with the run's config
        records.append({config_field or "config": shared})
    counts: dict[Any, int] = {}
    # every record well formed and in order (the tally's case), all but one, or any
    mode = draw(st.sampled_from(["clean", "one", "any"]))
    size = draw(st.integers(0, 14))
    odd = draw(st.integers(0, max(0, size - 1)))
    for at in range(size):
        clean = mode == "clean" or (mode == "one" and at != odd)
        task = draw(st.sampled_from(_TASKS[:3] if clean else _TASKS))
        record: dict[str, Any] = {}
        if clean or draw(st.integers(0, 20)) or task is None:
            record[fields["task"]] = task
        stray = None if clean else draw(st.sampled_from(_STRAYS))
        next_number = first + counts.get(task, 0)
        counts[task] = counts.get(task, 0) + 1
        number: Any = {
            "skip": next_number + 1,
            "repeat": max(first, next_number - 1),
            "zero": 0,
            "bool": True,
            "text": str(next_number),
            "back": next_number - 2,
        }.get(stray or "", next_number)
        sample_field = fields["sample"] or "trial"
        if stray != "missing":
            record[sample_field] = number
        common = clean or draw(st.booleans())
        outcome = draw(
            st.sampled_from(_OUTCOMES[: 3 if draw(st.booleans()) else 8] if common else _OUTCOMES)
        )
        record[fields["outcome"]] = outcome
        if clean or draw(st.integers(0, 3)):
            own = (
                shared
                if draw(st.integers(0, 3))
                else draw(st.sampled_from(_CONFIGS[: 10 if clean else 14]))
            )
            record[config_field or "config"] = own
        if not clean and draw(st.integers(0, 30)) == 0:
            record = draw(st.sampled_from([[record], "text", None]))
        records.append(record)
    line, lines = 0, []
    for record in records:
        line += draw(st.sampled_from([1, 1, 1, 2]))  # a blank line now and then
        lines.append((line, record))
    params = {
        "k": draw(st.integers(1, 6)),
        "environment_failures": draw(st.sampled_from(["exclude", "count_as_failure"])),
        "claimed": draw(
            st.sampled_from([{"tasks": 1}, {"successes": 2}, {"pass_at_k": 0.5}, {"trials": 4}])
        ),
        "fields": fields,
        "first_sample": first,
        "outcomes": draw(st.sampled_from([{}, {"timed out": "failure"}, {"": "success"}])),
    }
    return lines, params


def _judged(key: str, lines: list[tuple[int, Any]], params: dict[str, Any]) -> str:
    check = get(key)
    declared = {p.name for p in check.params}
    full = full_params(check, **{n: v for n, v in params.items() if n in declared})
    try:
        verdict = check.function({"trials": lines}, full)
    except CheckerInputError as exc:
        return f"error {exc.code}: {exc.message}"
    return repr((verdict.status, verdict.message, verdict.reasons, dict(verdict.details)))


def _both_ways(key: str, lines: list[tuple[int, Any]], params: dict[str, Any]) -> None:
    tallied = _judged(key, lines, params)
    with (
        mock.patch.object(tally, "trials_v1", return_value=None),
        mock.patch.object(tally, "samples_v2", return_value=None),
    ):
        assert _judged(key, lines, params) == tallied


def _trial(line: int, task: str, number: int, config: Any) -> tuple[int, Any]:
    return line, {"task": task, "trial": number, "outcome": "success", "config": config}


_ONE_TASK = {"k": 2, "environment_failures": "exclude", "claimed": {"tasks": 1}}


_V2 = {**_ONE_TASK, "fields": {}, "first_sample": 1, "outcomes": {}}
_NO_CONFIG = {**_V2, "fields": {"config": ""}}


@settings(max_examples=600, deadline=None)
@given(_files(), st.sampled_from(["trial-stats@2", "trial-stats@3"]))
@example(([_trial(1, "a", 1, {}), _trial(2, "a", 1, {})], _V2), "trial-stats@3")
@example(([_trial(1, "a", 2, {}), _trial(2, "a", 1, {})], _NO_CONFIG), "trial-stats@3")
@example(([(1, {"config": {}}), _trial(2, "a", 1, None)], _V2), "trial-stats@2")
@example(([(1, {"task": 5, "trial": 1, "outcome": True})], _NO_CONFIG), "trial-stats@3")
@example(
    (
        [
            _trial(1, "a", 1, _CONFIGS[0]),
            _trial(2, "a", 2, _CONFIGS[5]),
            _trial(3, "b", 1, _CONFIGS[1]),
            _trial(4, "b", 2, _CONFIGS[6]),
        ],
        _V2,
    ),
    "trial-stats@2",
)
def test_samples_tallied_in_one_pass_are_judged_as_read_record_by_record(
    file: tuple[list[tuple[int, Any]], dict[str, Any]], key: str
) -> None:
    _both_ways(key, *file)


@st.composite
def _trials(draw: st.DrawFn) -> tuple[list[tuple[int, Any]], dict[str, Any]]:
    """@1's files: trials numbered upwards from 1 per task (gaps allowed), all but one,
    or any record, well formed; configurations often alike in two key orders."""
    mode = draw(st.sampled_from(["clean", "one", "any"]))
    size = draw(st.integers(0, 9))
    odd = draw(st.integers(0, max(0, size - 1)))
    last: dict[Any, int] = {}
    lines: list[tuple[int, Any]] = []
    line = 0
    for at in range(size):
        # what strays in this record: nothing, or one of its parts
        stray = "" if mode == "clean" or (mode == "one" and at != odd) else "any"
        if stray:
            stray = draw(st.sampled_from(["task", "trial", "outcome", "config", "shape", "any"]))
        task = draw(st.sampled_from(_TASKS if stray in ("task", "any") else _TASKS[:3]))
        upwards = last.get(task, 0) + draw(st.sampled_from([1, 1, 1, 2]))
        last[task] = upwards
        number: Any = upwards
        if stray in ("trial", "any"):
            number = draw(
                st.sampled_from([upwards - 1, upwards - 1, upwards, 0, True, str(upwards)])
            )
        outcomes = _OUTCOMES if stray in ("outcome", "any") else OUTCOMES
        configs = _CONFIGS if stray in ("config", "any") else _CONFIGS[:4]
        record: Any = {"task": task, "trial": number, "outcome": draw(st.sampled_from(outcomes))}
        record["config"] = draw(st.sampled_from(configs))
        if stray in ("shape", "any") and draw(st.booleans()):
            record = draw(st.sampled_from([[record], "text", None, {"note": 1}]))
        line += draw(st.sampled_from([1, 1, 1, 2]))
        lines.append((line, record))
    params = {
        "k": draw(st.integers(1, 5)),
        "environment_failures": draw(st.sampled_from(["exclude", "count_as_failure"])),
        "claimed": draw(st.sampled_from([{"tasks": 1}, {"successes": 2}, {"pass_at_k": 0.5}])),
    }
    return lines, params


@settings(max_examples=600, deadline=None)
@given(_trials())
@example(([_trial(1, "a", 1, {}), _trial(2, "a", 1, {})], _ONE_TASK))  # a trial twice
@example(([_trial(1, "a", 2, {}), _trial(2, "a", 1, {})], _ONE_TASK))  # numbered downwards
@example(  # one configuration in two key orders, between the lines of another
    (
        [
            _trial(1, "a", 1, _CONFIGS[0]),
            _trial(2, "a", 2, _CONFIGS[2]),
            _trial(3, "b", 1, _CONFIGS[1]),
            _trial(4, "b", 2, _CONFIGS[0]),
        ],
        _ONE_TASK,
    )
)
def test_trials_tallied_in_one_pass_are_judged_as_read_record_by_record(
    file: tuple[list[tuple[int, Any]], dict[str, Any]],
) -> None:
    _both_ways("trial-stats@1", *file)


def test_the_generated_files_are_tallied_and_refused_both() -> None:
    """The tally takes a well-formed file and gives up on one it cannot take as it is."""
    good = [(1, {"task": "a", "trial": 1, "outcome": "success", "config": {}})]
    fields = {"task": "task", "sample": "trial", "outcome": "outcome", "config": "config"}
    outcomes = {"success": "success"}
    assert tally.samples_v2(good, fields, 1, outcomes, "exclude", unrecorded_config=True)
    assert tally.trials_v1(good, 1, "exclude")
    stray = [*good, (2, {"task": "a", "trial": 1, "outcome": "success", "config": {}})]
    assert tally.samples_v2(stray, fields, 1, outcomes, "exclude", unrecorded_config=True) is None
    assert tally.trials_v1(stray, 1, "exclude") is None
