"""The seed leftovers of issue 30 (item 7), each checked against the seed's own judge.

Each seed states how it judges: seed 001 prints a judge for runner reports
(``check_reports.py``) and the figures repeated trials are reported with; seed 000
compares "the full contents, keeping every field, value and list order, ignoring YAML
formatting and mapping key order". Each is written here as a small reference (our own
code, from the article's text), and the new checker version must agree with it on the
cases, the leftover cases included: fault-report@3 refuses what the seed's judge cannot
read, trial-stats@3 reads a harness file with no config line, structured-equal@2 reads a
candidate written with a YAML alias. Each leftover is shown on the old version too.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.format.manifest import Case
from bundler.run.runner import run_case
from checkers.api import Verdict
from tests.checkers.checker_calls import run
from tests.checkers.test_fault_injection import complete_report

# --------------------------------------------------------------------------- seed 001: reports

SEED_FAULTS = {"reject-writes", "double-reserve", "missing-record"}


def seed_judge(report: Any) -> str:
    """The article's judge (seed 001, ``check_reports.py``), read for read: the fields
    in the order and on the paths it reads them, so a missing one raises KeyError where
    it would. Its loop prints ``report["fault"]`` before judging, so that is read first."""
    report["fault"]
    records = report["records"]
    incomplete = (
        report["planned"] <= 0
        or not report["complete"]
        or report["blocked"]
        or report["executed"] != report["planned"]
        or len(records) != report["executed"]
        or len({r["test"] for r in records}) != len(records)
    )
    if incomplete:
        return "incomplete"
    statuses = [r["status"] for r in records]
    if any(s not in ("passed", "failed") for s in statuses):
        return "execution_error_or_skip"
    if report["fault"] == "none":
        return "baseline_pass" if all(s == "passed" for s in statuses) else "baseline_fail"
    if report["fault"] in SEED_FAULTS:
        return "defect_detected" if "failed" in statuses else "defect_missed"
    return "unknown_fault"


def seed_outcome(report: Any) -> str:
    """What the seed's judge gives: a judgement, or ``raises: <field>``."""
    try:
        return seed_judge(copy.deepcopy(report))
    except KeyError as missing:
        return f"raises: {missing.args[0]}"


def replay(fault: str, failed: int, **top: Any) -> dict[str, Any]:
    """A report of the seed's reference replay: 10 scenarios, ``failed`` of them failing
    on an assertion (the article's table: 0, 1, 1 and 4)."""
    records = [
        {
            "test": f"test_scenario_{i}",
            "status": "failed" if i < failed else "passed",
            "traceback": "E   AssertionError: expected 1, observed 0" if i < failed else None,
        }
        for i in range(10)
    ]
    return complete_report(fault, records, **top)


def without(value: dict[str, Any], field: str) -> dict[str, Any]:
    """``value`` without ``field`` (``records[3].test`` for a record's field)."""
    out = copy.deepcopy(value)
    if field.startswith("records["):
        index, key = field[len("records[") :].split("].")
        del out["records"][int(index)][key]
    else:
        del out[field]
    return out


def verdict_of(key: str, report: Any, want: str) -> Verdict:
    return run(key, {"report": report}, want=want)


THE_REPLAY = [
    (replay("none", 0), "baseline_pass"),
    (replay("reject-writes", 1), "defect_detected"),
    (replay("double-reserve", 1), "defect_detected"),
    (replay("missing-record", 4), "defect_detected"),
]


@pytest.mark.parametrize(("report", "judgement"), THE_REPLAY)
def test_the_replay_reports_earn_the_seeds_judgement(report: Any, judgement: str) -> None:
    assert seed_outcome(report) == judgement
    assert verdict_of("fault-report@3", report, judgement).status == "pass"


@pytest.mark.parametrize(
    "report",
    [
        replay("none", 2),
        replay("missing-record", 0),
        replay("latency", 1),
        replay("none", 0, planned=0, executed=0, records=[]),
        replay("none", 0, complete=False),
        replay("none", 0, blocked=True),
        replay("none", 0, blocked=None),
        replay("none", 0, blocked=[]),
        replay("none", 0, blocked=["test_scenario_3"]),
        replay("none", 0, blocked=3),
        replay("none", 0, executed=9),
        replay("missing-record", 1, planned=11, executed=11),
        {**replay("none", 0), "records": replay("none", 0)["records"][:9] * 2}
        | {"planned": 18, "executed": 18},
        {
            **replay("reject-writes", 1),
            "records": [
                {**r, "status": "error"} if r["test"] == "test_scenario_5" else r
                for r in replay("reject-writes", 1)["records"]
            ],
        },
    ],
    ids=lambda r: f"{r['fault']}-{r['planned']}-{r['blocked']}",
)
def test_every_judgement_agrees_with_the_seeds_judge(report: Any) -> None:
    judgement = seed_outcome(report)
    assert not judgement.startswith("raises")
    verdict = verdict_of("fault-report@3", report, judgement)
    assert verdict.status == "pass", verdict.message
    assert verdict_of("fault-report@2", report, judgement).status == "pass"


READ_FIELDS = [
    "fault",
    "records",
    "planned",
    "complete",
    "blocked",
    "executed",
    "records[4].test",
    "records[7].status",
]


@pytest.mark.parametrize("field", READ_FIELDS)
def test_a_report_the_seeds_judge_cannot_read_is_refused_naming_the_field(field: str) -> None:
    report = without(replay("missing-record", 4), field)
    name = field.rpartition(".")[2]
    assert seed_outcome(report) == f"raises: {name}"
    verdict = verdict_of("fault-report@3", report, "defect_detected")
    assert verdict.status == "error"
    assert verdict.codes == (f"report.missing.{name}",)
    assert field in verdict.message


@pytest.mark.parametrize(
    "change",
    [{"planned": "10"}, {"records": ["test_scenario_0"]}, {"records": [["test_a", "passed"]]}],
    ids=["planned-as-text", "record-as-text", "record-as-list"],
)
def test_a_value_the_seeds_judge_cannot_read_is_refused(change: dict[str, Any]) -> None:
    report = replay("none", 0, **change)
    if "records" in change:
        report.update(planned=1, executed=1)
    with pytest.raises(TypeError):
        seed_judge(copy.deepcopy(report))
    assert verdict_of("fault-report@3", report, "baseline_pass").codes == ("input.invalid",)


def test_a_report_without_blocked_was_judged_by_version_2() -> None:
    report = without(replay("missing-record", 4), "blocked")
    assert seed_outcome(report) == "raises: blocked"
    # the leftover: @2 reads a missing `blocked` as "not blocked" and supports the claim
    assert verdict_of("fault-report@2", report, "defect_detected").status == "pass"
    assert verdict_of("fault-report@3", report, "defect_detected").codes == (
        "report.missing.blocked",
    )


def test_every_missing_field_is_listed_and_the_code_names_the_first_the_seed_reads() -> None:
    report = without(without(replay("none", 0), "executed"), "blocked")
    verdict = verdict_of("fault-report@3", report, "baseline_pass")
    assert seed_outcome(report) == "raises: blocked"
    assert verdict.codes == ("report.missing.blocked",)
    assert "blocked" in verdict.message and "executed" in verdict.message


def test_a_field_the_seeds_judge_skips_on_a_short_path_is_still_required() -> None:
    # planned 0 makes the seed's `or` chain stop before `blocked`: it says incomplete
    # without reading it. The report still lacks a field the judgement is defined on.
    report = without(replay("none", 0, planned=0, executed=0, records=[]), "blocked")
    assert seed_outcome(report) == "incomplete"
    assert verdict_of("fault-report@3", report, "incomplete").codes == ("report.missing.blocked",)


def test_a_blocked_field_holding_null_is_present_and_read_as_the_seed_reads_it() -> None:
    report = replay("double-reserve", 1, blocked=None)
    assert seed_outcome(report) == "defect_detected"
    assert verdict_of("fault-report@3", report, "defect_detected").status == "pass"


def test_fault_report_3_keeps_the_ranges_of_its_params() -> None:
    report = replay("none", 0)
    assert run("fault-report@3", {"report": report}, want="baseline_pass", planned=0).codes == (
        "params.invalid",
    )
    assert run(
        "fault-report@3", {"report": report}, want="baseline_pass", expected_failures={"none": -1}
    ).codes == ("params.invalid",)
    assert verdict_of("fault-report@3", report, "detected").codes == ("params.invalid",)


FIELD_VALUES: dict[str, Any] = {
    "fault": st.sampled_from(["none", "missing-record", "reject-writes", "latency"]),
    "planned": st.integers(-1, 4),
    "executed": st.integers(0, 4),
    "complete": st.booleans(),
    "blocked": st.sampled_from([None, False, True, 0, 2, [], ["t1"], {}]),
}
RECORD = st.fixed_dictionaries(
    {},
    optional={
        "test": st.sampled_from(["t1", "t2", "t3", "t4"]),
        "status": st.sampled_from(["passed", "failed", "error", "skipped"]),
    },
)


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries({}, optional={**FIELD_VALUES, "records": st.lists(RECORD, max_size=4)})
)
def test_fault_report_3_agrees_with_the_seeds_judge_on_any_report(report: dict[str, Any]) -> None:
    """Every report: where the seed's judge raises on a field, @3 refuses naming that
    field; where it judges, @3 gives the same judgement, or refuses a report that lacks
    a field the seed's short path skipped; where nothing is missing, @2 agrees."""
    outcome = seed_outcome(report)
    if outcome.startswith("raises: "):
        verdict = verdict_of("fault-report@3", report, "incomplete")
        assert verdict.codes == (f"report.missing.{outcome.removeprefix('raises: ')}",)
        return
    verdict = verdict_of("fault-report@3", report, outcome)
    if verdict.status == "error":
        assert verdict.codes[0].startswith("report.missing.")
        assert outcome == "incomplete"  # only a short path skips a field
        return
    assert verdict.status == "pass", verdict.message
    assert verdict_of("fault-report@2", report, outcome).status == "pass"


# --------------------------------------------------------------------------- seed 001: trials


def seed_figures(outcomes: Mapping[str, list[str]], k: int) -> dict[str, float]:
    """The figures seed 001 says to report for repeated trials: the single-run success
    rate, the share of tasks with at least one success in k trials, the share with all k
    successful, per task and never pooled across tasks; environment failures listed
    apart and out of the denominators ("环境故障另列并报告剔除口径")."""
    counted = {t: [o for o in rows if o != "environment_failure"] for t, rows in outcomes.items()}
    tasks = [rows for rows in counted.values() if len(rows) == k]
    trials = [o for rows in counted.values() for o in rows]
    return {
        "tasks": len(tasks),
        "success_rate": trials.count("success") / len(trials),
        "pass_at_k": sum("success" in rows for rows in tasks) / len(tasks),
        "pass_hat_k": sum(all(o == "success" for o in rows) for rows in tasks) / len(tasks),
        "environment_failures": sum(
            rows.count("environment_failure") for rows in outcomes.values()
        ),
    }


HARNESS_TEXT = {
    "success": "passed",
    "failure": "failed: AssertionError",
    "environment_failure": "timed out",
}
NO_CONFIG = {"task": "task_id", "sample": "", "outcome": "result", "config": ""}


def harness_file(outcomes: Mapping[str, list[str]]) -> str:
    """A per-sample results file as a harness writes it: no config line, no sample index."""
    lines = [
        json.dumps({"task_id": task, "result": HARNESS_TEXT[o], "completion": "..."})
        for task, rows in outcomes.items()
        for o in rows
    ]
    return "\n".join(lines) + "\n"


def run_on_files(tmp_path: Path, checker: str, files: Mapping[str, str], **params: Any) -> Verdict:
    """The verdict of one case as verify runs it: files written, read under the checker
    version's reading rules, params checked and the vacuity check run."""
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    listed = {n: hashlib.sha256((tmp_path / n).read_bytes()).hexdigest() for n in files}
    roles = dict(zip(files_roles(checker), files, strict=True))
    case = Case(id="c", checker=checker, inputs=roles, params=params, expect="pass")
    return run_case(case, tmp_path, listed)


def files_roles(checker: str) -> tuple[str, ...]:
    return {"trial-stats": ("trials",), "structured-equal": ("actual", "expected")}[
        checker.partition("@")[0]
    ]


RUN = {
    "HumanEval/0": ["success", "failure", "success"],
    "HumanEval/1": ["failure", "failure", "failure"],
    "HumanEval/2": ["success", "success", "success"],
    "HumanEval/3": ["success", "environment_failure", "failure", "failure"],
}
OUTCOMES = {"timed out": "environment_failure"}


def test_a_harness_file_with_no_config_line_is_read_unchanged(tmp_path: Path) -> None:
    seed = seed_figures(RUN, 3)
    claimed = {name: seed[name] for name in ("tasks", "pass_at_k", "pass_hat_k", "success_rate")}
    params = {"k": 3, "claimed": claimed, "fields": NO_CONFIG, "outcomes": OUTCOMES}
    files = {"results.jsonl": harness_file(RUN)}
    # the leftover: @2 documents config "" and refuses it (the params as vacuous)
    old = run_on_files(tmp_path, "trial-stats@2", files, **params)
    assert old.codes == ("params.vacuous",)
    verdict = run_on_files(tmp_path, "trial-stats@3", files, **params)
    assert verdict.status == "pass", verdict.message
    figures = verdict.details["figures"]
    assert {name: figures[name] for name in seed} == pytest.approx(seed)
    assert verdict.details["config_compared"] is False
    assert "not checked that they are repeats of one setup" in verdict.message


def test_a_claim_the_seeds_figures_contradict_fails_on_a_file_with_no_config(
    tmp_path: Path,
) -> None:
    seed = seed_figures(RUN, 3)
    assert seed["pass_hat_k"] == 0.25  # only HumanEval/2 succeeded in all three
    params = {"k": 3, "fields": NO_CONFIG, "outcomes": OUTCOMES}
    files = {"results.jsonl": harness_file(RUN)}
    verdict = run_on_files(tmp_path, "trial-stats@3", files, claimed={"pass_hat_k": 0.5}, **params)
    assert verdict.codes == ("stats.mismatch",)
    assert "not checked that they are repeats" in verdict.message


def test_a_named_config_is_still_compared(tmp_path: Path) -> None:
    lines = [
        json.dumps({"task": t, "trial": i + 1, "outcome": o, "config": {"model": m}})
        for t, rows in RUN.items()
        for i, o in enumerate(rows)
        for m in ["model-b" if (t, i) == ("HumanEval/2", 1) else "model-a"]
    ]
    files = {"trials.jsonl": "\n".join(lines) + "\n"}
    verdict = run_on_files(tmp_path, "trial-stats@3", files, k=3, claimed={"tasks": 4})
    assert verdict.codes == ("stats.config_mixed",)
    assert verdict.details["config_compared"] is True
    no_config = json.dumps({"task": "a", "trial": 1, "outcome": "success"}) + "\n"
    refused = run_on_files(
        tmp_path, "trial-stats@3", {"trials.jsonl": no_config}, k=1, claimed={"tasks": 1}
    )
    assert refused.codes == ("input.invalid",) and "config" in refused.message


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"k": 0}, "k:"),
        ({"k": 1001}, "k:"),
        ({"k": 3, "tolerance": 0.05}, "tolerance"),
        ({"k": 3, "first_sample": 2}, "first_sample"),
        ({"k": 3, "claimed": {"pass_at_k": 1.5}}, "fraction"),
        ({"k": 3, "claimed": {"tasks": -1}}, "count"),
    ],
)
def test_trial_stats_3_params_outside_their_range_are_refused(
    params: dict[str, Any], fragment: str
) -> None:
    lines = [
        (n + 1, {"task_id": t, "result": HARNESS_TEXT[o]})
        for n, (t, o) in enumerate(
            (t, o) for t, rows in RUN.items() for o in rows if o != "environment_failure"
        )
    ]
    full = {"claimed": {"tasks": 3}, "fields": NO_CONFIG, **params}
    verdict = run("trial-stats@3", {"trials": lines}, **full)
    assert verdict.codes == ("params.invalid",) and fragment in verdict.message


@settings(max_examples=80, deadline=None)
@given(
    k=st.integers(1, 4),
    data=st.data(),
)
def test_trial_stats_3_agrees_with_the_seeds_figures(k: int, data: st.DataObject) -> None:
    outcome = st.sampled_from(["success", "failure"])
    run_ = data.draw(
        st.dictionaries(
            st.sampled_from(["a", "b", "c", "d"]),
            st.lists(outcome, min_size=k, max_size=k),
            min_size=1,
        )
    )
    seed = seed_figures(run_, k)
    lines = [
        (n + 1, {"task_id": t, "result": HARNESS_TEXT[o]})
        for n, (t, o) in enumerate((t, o) for t, rows in run_.items() for o in rows)
    ]
    claimed = {name: seed[name] for name in ("tasks", "pass_at_k", "pass_hat_k", "success_rate")}
    verdict = run("trial-stats@3", {"trials": lines}, k=k, claimed=claimed, fields=NO_CONFIG)
    assert verdict.status == "pass", verdict.message
    hat = seed["pass_hat_k"]
    for wrong in (
        {"tasks": seed["tasks"] + 1},
        {"pass_hat_k": hat + 0.1 if hat < 0.5 else hat - 0.1},
    ):
        verdict = run("trial-stats@3", {"trials": lines}, k=k, claimed=wrong, fields=NO_CONFIG)
        assert verdict.codes == ("stats.mismatch",)


# --------------------------------------------------------------------------- seed 000: content


def seed_same(a: Any, b: Any) -> bool:
    """Seed 000's content check: every field, value and list order kept, YAML formatting
    and mapping key order ignored; values keep their type (1 is not "1", nor 1.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(seed_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(seed_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def seed_read(text: str) -> Any:
    """How the seed reads a YAML document: parsed, anchors and aliases being formatting."""
    return yaml.safe_load(text)


EXPECTED = """\
defaults:
  timeout: 30
  retries: 2
decisions:
  - name: target
    description: new description
    limits: {timeout: 30, retries: 2}
  - name: other
    description: unchanged
    limits: {timeout: 30, retries: 2}
"""
WITH_ALIASES = """\
defaults: &limits
  retries: 2
  timeout: 30
decisions:
  - name: target
    description: new description
    limits: *limits
  - name: other
    limits: *limits
    description: unchanged
"""
OTHER_LOST = """\
defaults: &limits {timeout: 30, retries: 2}
decisions:
  - name: target
    description: new description
    limits: *limits
"""
WRONG_BLOCK = """\
defaults: &limits {timeout: 30, retries: 2}
strict: &strict {timeout: 5, retries: 0}
decisions:
  - {name: target, description: new description, limits: *limits}
  - {name: other, description: unchanged, limits: *strict}
"""


def compare(tmp_path: Path, checker: str, actual: str, expected: str = EXPECTED) -> Verdict:
    files = {"actual.yaml": actual, "expected.yaml": expected}
    return run_on_files(tmp_path, checker, files)


def test_a_correct_candidate_written_with_an_alias_is_checked(tmp_path: Path) -> None:
    assert seed_same(seed_read(WITH_ALIASES), seed_read(EXPECTED))
    # the leftover: @1 refuses the alias as unreadable, so the right candidate cannot pass
    assert compare(tmp_path, "structured-equal@1", WITH_ALIASES).codes == ("input.unreadable",)
    verdict = compare(tmp_path, "structured-equal@2", WITH_ALIASES)
    assert verdict.status == "pass", verdict.message


@pytest.mark.parametrize(
    ("actual", "codes"),
    [(OTHER_LOST, ("content.removed",)), (WRONG_BLOCK, ("content.added", "content.changed"))],
    ids=["other-rule-lost", "alias-to-another-block"],
)
def test_a_wrong_candidate_written_with_aliases_fails_as_the_seed_judges(
    tmp_path: Path, actual: str, codes: tuple[str, ...]
) -> None:
    assert not seed_same(seed_read(actual), seed_read(EXPECTED))
    verdict = compare(tmp_path, "structured-equal@2", actual)
    assert verdict.status == "fail" and set(verdict.codes) <= set(codes), verdict.codes


def test_alias_expansion_keeps_its_bound(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    verdict = compare(tmp_path, "structured-equal@2", "\n".join(lines) + "\n")
    assert verdict.codes == ("input.unreadable",) and "extra nodes" in verdict.message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("base: &b {x: 1}\nitem:\n  <<: *b\n  y: 2\n", "merge keys"),
        ("a: &a [1, *a]\n", "contains it"),
        ("%YAML 1.2\n---\na: 1\n", "declares YAML 1.2"),
    ],
    ids=["merge-key", "self-reference", "yaml-1.2"],
)
def test_what_structured_equal_2_cannot_read_is_refused_by_name(
    tmp_path: Path, text: str, fragment: str
) -> None:
    verdict = compare(tmp_path, "structured-equal@2", text)
    assert verdict.codes == ("input.unreadable",) and fragment in verdict.message


class _Written(yaml.SafeDumper):
    """Writes a shared block out each time instead of as an anchor and aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


LEAF = st.one_of(st.integers(-3, 3), st.text("ab", max_size=2), st.booleans(), st.none())
BLOCK = st.dictionaries(st.text("xyz", min_size=1, max_size=2), LEAF, min_size=1, max_size=3)


@settings(max_examples=40, deadline=None)
@given(block=BLOCK, uses=st.integers(2, 4), other=LEAF)
def test_structured_equal_2_agrees_with_the_seeds_comparison(
    block: dict[str, Any], uses: int, other: Any
) -> None:
    import tempfile

    document = {"rules": [block] * uses, "other": other}  # one block, shared
    aliased = yaml.safe_dump(document)  # PyYAML writes a shared block as &id001 / *id001
    assert "*id001" in aliased
    written = yaml.dump(document, Dumper=_Written)
    changed = yaml.dump({**document, "rules": [block] * (uses - 1)}, Dumper=_Written)
    with tempfile.TemporaryDirectory() as folder:
        for expected, same in ((written, True), (changed, False)):
            assert seed_same(seed_read(aliased), seed_read(expected)) is same
            verdict = compare(Path(folder), "structured-equal@2", aliased, expected)
            assert verdict.status == ("pass" if same else "fail"), verdict.message
