"""Hand-written bundles against the Inspect checkers (issue 30, items 1 and 2).

Each attack is a bundle an author writes without `reprobundle import` (the quickstart
bundle with its cases and claims replaced, hashes kept honest): a forged log and params
that restate what the forger wants. Under the @1 checkers, which trust their params, the
claim comes out supported; under @2, which read the log's header and recorded scorers,
it is contradicted (exit 1), with a reason code naming the figure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.cli import main
from bundler.run.verify import VerifyOptions, verify
from tests.helpers import edit_manifest

Doc = dict[str, Any]


def log(
    samples: list[Doc],
    results: Doc | None,
    status: str = "success",
    options: Doc | None = None,
) -> bytes:
    document: Doc = {
        "version": 2,
        "status": status,
        "eval": {"task": "forged", "scorers": [{"name": "match", "options": options or {}}]},
        "samples": samples,
    }
    if results is not None:
        document["results"] = results
    return json.dumps(document, indent=1).encode()


def sample(sid: str, completion: str, value: str | None, error: str | None = None) -> Doc:
    found: Doc = {
        "id": sid,
        "epoch": 1,
        "target": "4",
        "output": {"completion": completion},
        "scores": {} if value is None else {"match": {"value": value}},
    }
    if error:
        found["error"] = {"message": error}
    return found


def results(total: int, accuracy: float, scored: int) -> Doc:
    metrics = {"accuracy": {"name": "accuracy", "value": accuracy, "params": {}}}
    return {
        "total_samples": total,
        "completed_samples": total,
        "scores": [
            {
                "name": "match",
                "scorer": "match",
                "reducer": None,
                "scored_samples": scored,
                "unscored_samples": 0,
                "metrics": metrics,
            }
        ],
    }


TEN = [sample(f"s{i}", "4" if i < 5 else "5", "C" if i < 5 else "I") for i in range(10)]
# the header says accuracy 0.95 over 1,000 samples; the log holds 10 records, 5 correct
FORGED = log(TEN, results(1000, 0.95, 1000))
# a control: the header says 0.5, the samples give 0 (all wrong)
CONTROL = log([sample(f"s{i}", "5", "I") for i in range(2)], results(2, 0.5, 2))
# status error; 3 of 4 records errored
ERRORED = log(
    [sample("s0", "4", "C"), *[sample(f"s{i}", "", None, "boom") for i in (1, 2, 3)]],
    results(4, 1.0, 1),
    status="error",
)
CLEAN = log(TEN, results(10, 0.5, 10))
# the run scored with match(location="begin"); the stored scores are what location="end" gives
BEGIN = log(
    [sample("s1", "4 is it", "I"), sample("s2", "it is 4", "C")],
    results(2, 0.5, 2),
    options={"location": "begin"},
)
HONEST_BEGIN = log(
    [sample("s1", "4 is it", "C"), sample("s2", "it is 4", "I")],
    results(2, 0.5, 2),
    options={"location": "begin"},
)
FILES = {
    "inputs/forged.json": FORGED,
    "inputs/control.json": CONTROL,
    "inputs/errored.json": ERRORED,
    "inputs/errored-success.json": ERRORED.replace(b'"status": "error"', b'"status": "success"'),
    "inputs/clean.json": CLEAN,
    "inputs/begin.json": BEGIN,
    "inputs/honest-begin.json": HONEST_BEGIN,
}


def bundle(quickstart: Path, tmp: Path, cases: list[Doc], name: str) -> Path:
    def edit(doc: Doc) -> None:
        doc["cases"] = cases
        doc["claims"] = [
            {
                "id": "the-claim",
                "statement": "The log's header figures follow from its samples.",
                "cases": [c["id"] for c in cases],
                "limits": [],
            }
        ]

    return edit_manifest(quickstart, tmp / f"{name}.bundle.tar.gz", edit, dict(FILES))


def case(case_id: str, checker: str, path: str, params: Doc, reasons: list[str] | None) -> Doc:
    found: Doc = {
        "id": case_id,
        "checker": checker,
        "inputs": {"log": f"inputs/{path}"},
        "params": params,
        "expect": "pass" if reasons is None else "fail",
    }
    if reasons:
        found["expect_reasons"] = reasons
    return found


def attacks(version: int) -> dict[str, tuple[str, list[Doc]]]:
    """Per attack: the code @2 fails the forged case with, and the cases: the forged
    input expected to pass, and a control (same checker and params) that fails."""

    def pair(checker: str, forged: str, control: str, params: Doc, codes: list[str]) -> list[Doc]:
        key = f"{checker}@{version}"
        return [
            case("forged", key, forged, params, None),
            case("control", key, control, params, codes),
        ]

    v1 = version == 1
    figure = {"scorer": "match", "reducer": "", "metric": "accuracy", "claimed": 0.5}
    options = {"scorer": "match", "method": "match", "options": {"location": "end"}}
    return {
        # header accuracy 0.95 over 1,000 samples; 10 records, 5 correct; params say 0.5
        "forged_header_accuracy": (
            "inspect.header_metric_mismatch",
            pair(
                "inspect-metric",
                "forged.json",
                "control.json",
                figure,
                ["inspect.figure_mismatch" if v1 else "inspect.header_metric_mismatch"],
            ),
        ),
        "forged_header_counts": (
            "inspect.header_count_mismatch",
            pair(
                "inspect-counts",
                "forged.json",
                "control.json",
                {"claimed": {"total_samples": 10}},
                ["inspect.count_mismatch" if v1 else "inspect.claimed_mismatch"],
            ),
        ),
        "status_error_with_three_of_four_records_errored": (
            "inspect.records_errored",
            pair(
                "inspect-status",
                "errored.json",
                "errored-success.json",
                {},
                ["inspect.errors_under_success" if v1 else "inspect.records_errored"],
            ),
        ),
        "rescore_with_options_other_than_the_logs": (
            "inspect.scorer_mismatch",
            pair(
                "inspect-rescore",
                "begin.json",
                "honest-begin.json",
                options,
                ["inspect.score_mismatch" if v1 else "inspect.scorer_mismatch"],
            ),
        ),
    }


ATTACKS = list(attacks(2))


@pytest.mark.parametrize("name", ATTACKS)
def test_hand_written_bundle_is_contradicted_under_v2(
    quickstart_bundle: Path, tmp_path: Path, name: str
) -> None:
    code, cases = attacks(2)[name]
    result = verify(bundle(quickstart_bundle, tmp_path, cases, name))
    forged = next(r for r in result.cases if r.case.id == "forged")
    assert forged.verdict.status == "fail" and code in forged.verdict.codes
    assert forged.outcome == "diverged"
    assert result.status == "contradicted"
    done = CliRunner().invoke(main, ["verify", str(tmp_path / f"{name}.bundle.tar.gz")])
    assert done.exit_code == 1, done.output


@pytest.mark.parametrize("name", ATTACKS)
def test_the_same_bundle_under_v1_is_supported_only_when_its_advisory_is_accepted(
    quickstart_bundle: Path, tmp_path: Path, name: str
) -> None:
    """@1 is kept unchanged (its docs say it trusts the params): the attack's baseline.
    Its advisory (issue 41) keeps verify from calling the forged claim supported unless
    the reviewer accepts it."""
    from bundler.format.advisories import of_checker

    forged = bundle(quickstart_bundle, tmp_path, attacks(1)[name][1], name)
    result = verify(forged)
    assert result.status == "inconclusive"
    ids = sorted({a.id for r in result.cases for a in of_checker(r.case.checker)})
    assert ids and all(any(i in c.why for i in ids) for c in result.claims)
    accepted = verify(forged, VerifyOptions(accept_advisories=ids))
    assert accepted.status == "supported", [(r.case.id, r.verdict.message) for r in accepted.cases]


def test_an_honest_hand_written_bundle_is_supported_under_the_newest_versions(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    figure = {"scorer": "match", "reducer": "", "metric": "accuracy", "claimed": 0.5}
    cases = [
        # inspect-metric@2 has an advisory (RB-2026-0045): the honest bundle is on @4
        case("figure", "inspect-metric@4", "clean.json", figure, None),
        case("figure-control", "inspect-metric@4", "forged.json", figure, None),
        # inspect-counts@2 has an advisory (RB-2026-0043): the honest bundle is on @3
        case("counts", "inspect-counts@3", "clean.json", {}, None),
        case("counts-control", "inspect-counts@3", "forged.json", {}, None),
        case("status", "inspect-status@2", "clean.json", {}, None),
        case("status-control", "inspect-status@2", "errored.json", {}, None),
    ]
    for control, codes in zip(
        cases[1::2],
        (
            [
                "inspect.claimed_mismatch",
                "inspect.header_metric_mismatch",
                "inspect.header_scored_mismatch",
            ],
            ["inspect.header_count_mismatch", "inspect.planned_not_run"],
            ["inspect.records_errored", "inspect.status_not_success"],
        ),
        strict=True,
    ):
        control["expect"], control["expect_reasons"] = "fail", codes
    result = verify(bundle(quickstart_bundle, tmp_path, cases, "honest"))
    assert result.status == "supported", [(r.case.id, r.verdict.message) for r in result.cases]
